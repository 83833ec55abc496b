package collector

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/model"
)

// IfindexResolver is implemented by a Meter that knows its interfaces'
// indexes itself (the demo's); others get the host's (net.InterfaceByName).
type IfindexResolver interface {
	Ifindex(name string) (int, error)
}

// meterTracker is the Sampler's side of the flow meter: it keeps the
// meter attached to the followed bonds' slaves, reads it once per sample,
// and turns each reading into every bond's MeasuredTraffic.
type meterTracker struct {
	meter   flowmeter.Meter
	ifindex func(string) (int, error)
	// every is how often the meter is read (Options.MeterEvery); kernel
	// is the kernel the predictions follow (Sampler.hashKernel).
	every  time.Duration
	kernel func() bonding.KernelVersion

	synced  string         // the slave set Sync last accepted
	names   map[int]string // ifindex -> slave, as last synced
	syncErr string         // the last Sync error, said once
	lastErr string         // the last Read error, said once

	// readAt is when the meter was last read, readFor what the slaves
	// and the bonds' hashing were then (sync's key, then each bond's
	// prediction key): a change of either makes a read due at once.
	readAt   time.Time
	readFor  []byte
	stateBuf []byte
	usable   []string // appendPredictionKey's scratch
	reads    int

	prevAt time.Time
	// prev is the previous reading's flows in its order, index (built
	// only when needed) finds one by key, spare is the slice before prev,
	// reused.
	prev     []prevFlow
	index    map[flowKey]int32
	spare    []prevFlow
	prevLost map[lostKey]flowCount

	// local caches the socket set of each bond's flow table.
	local map[string]localSockets
	// last is each bond's traffic of the last good reading, shown again
	// while the meter cannot be read.
	last map[string]*model.MeasuredTraffic

	// Scratch of one sample, reused: the slaves' names and their sorted
	// key (sync), each slave's bond and each bond's flows (attach), the
	// ranking, rates and forwarding MACs of one bond (measure), and the
	// lost buckets' map of two readings ago.
	nameBuf   []string
	keyBuf    []byte
	owner     map[string]int
	perBond   [][]int32
	entries   []rankEntry
	rates     []flowRate
	fwdMACs   map[[6]byte]bool
	spareLost map[lostKey]flowCount
}

type flowCount struct{ bytes, packets uint64 }

// flowRate is what a flow did in the interval.
type flowRate struct {
	ok    bool
	moved uint64 // bytes
	pps   float64
}

// prevFlow is a flow of the previous reading: packed key and counts,
// free of pointers, so the collector neither scans nor barriers it.
type prevFlow struct {
	key flowKey
	flowCount
}

// flowKey is a flowmeter.Key packed without pointers: a map of a hundred
// thousand of them is neither scanned by the garbage collector nor hashed
// through netip.Addr's zone pointer.
type flowKey [48]byte

func keyOf(k *flowmeter.Key) flowKey {
	var out flowKey
	src, dst := k.Src.As16(), k.Dst.As16()
	copy(out[0:16], src[:])
	copy(out[16:32], dst[:])
	binary.LittleEndian.PutUint32(out[32:], uint32(k.Ifindex))
	binary.LittleEndian.PutUint16(out[36:], k.VLAN)
	binary.LittleEndian.PutUint16(out[38:], k.EtherType)
	binary.LittleEndian.PutUint16(out[40:], k.SrcPort)
	binary.LittleEndian.PutUint16(out[42:], k.DstPort)
	out[44] = k.Proto
	out[45] = byte(k.Direction)
	if k.Fragment {
		out[46] = 1
	}
	if k.Src.Is4() {
		out[47] |= 1 // an IPv4 address and its IPv4-mapped form are two keys
	}
	if k.Dst.Is4() {
		out[47] |= 2
	}
	return out
}

type lostKey struct {
	slave string
	dir   flowmeter.Direction
}

// sockKey is a socket as a flow's headers show it, from this host's side.
type sockKey struct {
	proto         uint8
	local, remote netip.AddrPort
}

type localSockets struct {
	table *model.FlowTable
	set   map[sockKey]struct{}
}

func newMeterTracker(m flowmeter.Meter) *meterTracker {
	t := &meterTracker{meter: m, ifindex: hostIfindex, local: map[string]localSockets{}, last: map[string]*model.MeasuredTraffic{}}
	if r, ok := m.(IfindexResolver); ok {
		t.ifindex = r.Ifindex
	}
	return t
}

func hostIfindex(name string) (int, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return 0, err
	}
	return ifi.Index, nil
}

// sync attaches the meter to exactly the slaves of bonds when they
// changed since the last call. What went wrong (a slave without an
// index, an attach that failed) is tried again at the next sample, and
// returned once.
func (t *meterTracker) sync(bonds []model.BondSample) []string {
	names := t.nameBuf[:0]
	for i := range bonds {
		for j := range bonds[i].Slaves {
			names = append(names, bonds[i].Slaves[j].Name)
		}
	}
	t.nameBuf = names
	slices.Sort(names)
	t.keyBuf = t.keyBuf[:0]
	for i, n := range names {
		if i > 0 {
			t.keyBuf = append(t.keyBuf, ' ')
		}
		t.keyBuf = append(t.keyBuf, n...)
	}
	if string(t.keyBuf) == t.synced {
		return nil
	}
	key := string(t.keyBuf)
	var problems []string
	m := make(map[int]string, len(names))
	for _, n := range names {
		idx, err := t.ifindex(n)
		if err != nil {
			problems = append(problems, n+": "+err.Error())
			continue
		}
		m[idx] = n
	}
	t.names = m
	if err := t.meter.Sync(m); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) == 0 {
		t.syncErr, t.synced = "", key
		return nil
	}
	msg := "flow meter: " + strings.Join(problems, "; ")
	if msg == t.syncErr {
		return nil
	}
	t.syncErr = msg
	return []string{msg}
}

// meterRead is one reading of the meter and how it went.
type meterRead struct {
	r   flowmeter.Reading
	err error
}

// DashboardMeterEvery is how often the dashboard has the Sampler read the
// flow meter at a pace faster than it (Options.MeterEvery; at a second or
// slower, every tick). A read walks the kernel's whole flow map (2 ms of
// user and 1.6 ms of system time for 10 k flows), and a flow table
// redrawn ten times a second cannot be read anyway: below a second's
// pace, the flows, their rates (over the second between two reads) and
// the agreement with the predictions are those of the last read, carried
// by the snapshots in between; each says its time (MeasuredTraffic.Time).
// The first two reads come on the first two ticks, so that rates show at
// once. A read also comes at once when the slaves change or a bond's
// hashing does (mode, policy, active or usable slaves), so that what is
// shown never pairs flows with a bond that is no longer so.
const DashboardMeterEvery = time.Second

// read syncs the meter to snap's bonds and reads it when a read is due
// (every: Options.MeterEvery); fresh says whether it did. The Sampler
// calls it at once after the source's read, so the counters and the
// flows cover the same interval (the socket dump in between takes
// milliseconds).
func (t *meterTracker) read(now time.Time, snap *model.Snapshot, bonds []bonding.Bond, every, interval time.Duration) (mr meterRead, fresh bool) {
	snap.Warnings = append(snap.Warnings, t.sync(snap.Bonds)...)
	if every > 0 {
		state := append(t.stateBuf[:0], t.synced...)
		for i := range bonds {
			state, t.usable = appendPredictionKey(append(state, '\n'), &bonds[i], t.usable)
		}
		t.stateBuf = state
		if t.reads >= 2 && !dueEvery(t.readAt, now, every, interval) && bytes.Equal(state, t.readFor) {
			return meterRead{}, false
		}
	}
	t.reads++
	t.readAt, t.readFor = now, append(t.readFor[:0], t.stateBuf...)
	r, err := t.meter.Read()
	return meterRead{r, err}, true
}

// dueEvery reports whether a read made once an every is due at now, the
// last having been at last (none: zero) on ticks interval apart. A tenth
// of the interval is allowed for the jitter of the ticks, so that at
// 100 ms a read a second comes every tenth tick rather than every tenth
// or eleventh; at a pace of every or slower, every tick reads.
func dueEvery(last, now time.Time, every, interval time.Duration) bool {
	return last.IsZero() || now.Sub(last) >= every-interval/10
}

// showLast gives every bond of snap the traffic of the last good read.
func (t *meterTracker) showLast(snap *model.Snapshot) {
	for i := range snap.Bonds {
		snap.Bonds[i].Measured = t.last[snap.Bonds[i].Name]
	}
}

// attach gives every bond of snap its measured traffic from mr; bonds are
// the source's readings (for the predictions), k the kernel the hash is
// computed for.
func (t *meterTracker) attach(now time.Time, snap *model.Snapshot, bonds []bonding.Bond, k bonding.KernelVersion, mr meterRead) {
	r, err := mr.r, mr.err
	if err != nil {
		if msg := "flow meter: " + err.Error(); msg != t.lastErr {
			t.lastErr = msg
			snap.Warnings = append(snap.Warnings, msg)
		}
		// Keep showing the last reading rather than none.
		t.showLast(snap)
		return
	}
	t.lastErr = ""
	snap.Warnings = append(snap.Warnings, r.Warnings...)
	at := r.Time
	if at.IsZero() {
		at = now
	}
	seconds := 0.0
	if !t.prevAt.IsZero() && at.After(t.prevAt) {
		seconds = at.Sub(t.prevAt).Seconds()
	}

	// Which bond each flow's slave belongs to.
	if t.owner == nil {
		t.owner = make(map[string]int, len(t.names))
	}
	owner := t.owner
	clear(owner)
	for i := range snap.Bonds {
		for j := range snap.Bonds[i].Slaves {
			owner[snap.Bonds[i].Slaves[j].Name] = i
		}
	}
	prevOf := t.match(r.Flows)
	for len(t.perBond) < len(snap.Bonds) {
		t.perBond = append(t.perBond, nil)
	}
	perBond := t.perBond[:len(snap.Bonds)]
	for i := range perBond {
		perBond[i] = perBond[i][:0]
	}
	for i := range r.Flows {
		f := &r.Flows[i]
		if f.Slave == "" {
			f.Slave = t.names[f.Ifindex]
		}
		if b, ok := owner[f.Slave]; ok {
			perBond[b] = append(perBond[b], int32(i))
		}
	}
	for i := range snap.Bonds {
		bs := &snap.Bonds[i]
		b := bondNamed(bonds, bs.Name)
		if b == nil {
			continue
		}
		bs.Measured = t.measure(bs, b, k, &r, prevOf, perBond[i], at, seconds)
	}
	clear(t.last)
	for i := range snap.Bonds {
		if m := snap.Bonds[i].Measured; m != nil {
			t.last[snap.Bonds[i].Name] = m
		}
	}

	// The next reading's baseline: every flow, every lost bucket. The
	// slice of two readings ago is refilled.
	next := t.spare[:0]
	for i := range r.Flows {
		next = append(next, prevFlow{keyOf(&r.Flows[i].Key), flowCount{r.Flows[i].Bytes, r.Flows[i].Packets}})
	}
	nextLost := t.spareLost
	if nextLost == nil {
		nextLost = make(map[lostKey]flowCount, len(r.Lost))
	}
	clear(nextLost)
	for _, l := range r.Lost {
		nextLost[lostKey{t.lostSlave(&l), l.Direction}] = flowCount{l.Bytes, l.Packets}
	}
	t.spare, t.index = t.prev, nil
	t.spareLost = t.prevLost
	t.prev, t.prevLost, t.prevAt = next, nextLost, at
	for name := range t.local {
		if snap.Bond(name) == nil {
			delete(t.local, name)
		}
	}
}

func (t *meterTracker) lostSlave(l *flowmeter.Lost) string {
	if l.Slave != "" {
		return l.Slave
	}
	return t.names[l.Ifindex]
}

// match finds each flow of flows in the previous reading: its index
// there, or -1. The meter lists its map in bucket order, which keeps the
// flows that stay in the same order from one reading to the next; so
// each flow is first compared with the one after the previous match, and
// only a flow that is not there is looked up by key (the index is built
// at the first such flow).
func (t *meterTracker) match(flows []flowmeter.Flow) []int32 {
	out := make([]int32, len(flows))
	j := 0
	for i := range flows {
		k := keyOf(&flows[i].Key)
		if j < len(t.prev) && t.prev[j].key == k {
			out[i] = int32(j)
			j++
			continue
		}
		if t.index == nil {
			t.index = make(map[flowKey]int32, len(t.prev))
			for n := range t.prev {
				t.index[t.prev[n].key] = int32(n)
			}
		}
		p, ok := t.index[k]
		if !ok {
			out[i] = -1
			continue
		}
		out[i] = p
		j = int(p) + 1
	}
	return out
}

// delta is what a cumulative pair of counters did since the previous
// reading: all of it for a flow new since then, nothing known (ok false)
// when the counters went back or there is no previous reading.
func delta(prev flowCount, had bool, cur flowCount, firstSeen, prevAt time.Time) (flowCount, bool) {
	if prevAt.IsZero() {
		return flowCount{}, false
	}
	if !had {
		// A flow the previous reading lacked is new since then, unless the
		// meter dates it earlier (it was not synced to that slave yet, or
		// its entry was deleted and re-made): then its bytes span more
		// than the interval.
		if !firstSeen.IsZero() && firstSeen.Before(prevAt) {
			return flowCount{}, false
		}
		return cur, true
	}
	if cur.bytes < prev.bytes || cur.packets < prev.packets {
		return flowCount{}, false // a gap: the entry was re-made
	}
	return flowCount{cur.bytes - prev.bytes, cur.packets - prev.packets}, true
}

// measure builds one bond's MeasuredTraffic from the flows of r at idx;
// prevOf gives each flow of r its place in t.prev.
func (t *meterTracker) measure(bs *model.BondSample, b *bonding.Bond, k bonding.KernelVersion, r *flowmeter.Reading, prevOf, idx []int32, at time.Time, seconds float64) *model.MeasuredTraffic {
	mt := &model.MeasuredTraffic{
		Source: string(r.Source), SampleRate: max(r.SampleRate, 1), Time: at, Seconds: seconds,
		MapEntries: r.MapEntries, MapSize: r.MapSize, Kernel: k,
		Flows:  make([]model.MeasuredFlow, len(idx)),
		Slaves: make([]model.MeasuredSlave, len(b.Slaves)),
	}
	slaveIdx := make(map[string]int, len(b.Slaves))
	for i := range b.Slaves {
		mt.Slaves[i].Slave = b.Slaves[i].Name
		slaveIdx[b.Slaves[i].Name] = i
	}
	pred, _ := bonding.NewPredictor(b, k)
	arpMonitor := b.ARPIntervalMs != nil && *b.ARPIntervalMs > 0
	// balance-tlb hashes the frame, then rewrites its source MAC to the
	// slave's own: the meter sees the rewritten one, a policy that reads
	// it cannot be re-run on the frame.
	tlbRewrite := pred != nil && pred.Mode == bonding.ModeTLB && pred.Policy != bonding.PolicyLayer34 && pred.Policy != bonding.PolicyEncap34
	local := t.localSet(bs)
	var agreeBytes, predictableBytes float64
	// Rates first, then the ranking, then each flow is built once in
	// its place.
	entries := slices.Grow(t.entries[:0], len(idx))[:len(idx)]
	clear(entries)
	rates := slices.Grow(t.rates[:0], len(r.Flows))[:len(r.Flows)] // by index in r, read after the ranking
	clear(rates)
	t.entries, t.rates = entries, rates
	for n, i := range idx {
		f := &r.Flows[i]
		var prev flowCount
		if p := prevOf[i]; p >= 0 {
			prev = t.prev[p].flowCount
		}
		d, ok := delta(prev, prevOf[i] >= 0, flowCount{f.Bytes, f.Packets}, f.FirstSeen, t.prevAt)
		entries[n].i, entries[n].bytes = i, f.Bytes
		if ok && seconds > 0 {
			rates[i] = flowRate{ok: true, moved: d.bytes, pps: float64(d.packets) / seconds}
			entries[n].bps = float64(d.bytes) * 8 / seconds
		}
	}
	rankFlows(entries, r.Flows)
	// The MACs forwarded tx flows come from (VMs, bridge ports): rx flows
	// to them are forwarded too.
	if t.fwdMACs == nil {
		t.fwdMACs = map[[6]byte]bool{}
	}
	fwdMACs := t.fwdMACs
	clear(fwdMACs)
	for _, i := range idx {
		if f := &r.Flows[i]; f.Direction == flowmeter.Tx && f.IngressIfindex != 0 {
			fwdMACs[f.SrcMAC] = true
		}
	}
	for n, e := range entries {
		f := &mt.Flows[n]
		f.Flow = &r.Flows[e.i]
		rate := &rates[e.i]
		f.HaveRate, f.Bps, f.Pps = rate.ok, e.bps, rate.pps
		f.Local = len(local) > 0 && isLocal(local, f.Flow)
		f.Forwarded = !f.Local && (f.IsTx() && f.IngressIfindex != 0 || !f.IsTx() && fwdMACs[f.DstMAC])
		s := &mt.Slaves[slaveIdx[f.Slave]]
		if !f.IsTx() {
			f.Predicted = model.RxChoice
			s.RxFlows++
			s.RxBps += f.Bps
			continue
		}
		s.TxFlows++
		s.TxBps += f.Bps
		switch {
		case pred == nil:
			f.Predicted = bonding.Choice{Outcome: bonding.Unpredictable, Index: -1, Reason: "bonding mode or policy unknown"}
		case perSlave(f.Flow, arpMonitor):
			f.Predicted = perSlaveChoice
		case tlbRewrite:
			f.Predicted = tlbRewriteChoice
		default:
			p := f.Packet()
			f.Predicted = predict(pred, &p)
		}
		// The hash check counts the flows that moved in the interval: an
		// idle entry may predate a failover.
		weight := float64(f.Bytes)
		if mt.HaveRates() {
			if !f.HaveRate || rate.moved == 0 {
				continue
			}
			weight = float64(rate.moved)
		}
		a := &mt.Agreement
		a.Flows++
		switch ps := f.PredictedSlave(); {
		case ps == "":
			a.Unpredictable++
		case ps == f.Slave:
			a.Agree++
			agreeBytes += weight
			predictableBytes += weight
		default:
			predictableBytes += weight
		}
	}
	if predictableBytes > 0 {
		mt.Agreement.BytesAgreeShare = new(agreeBytes / predictableBytes)
	}
	for _, l := range r.Lost {
		name := t.lostSlave(&l)
		j, ok := slaveIdx[name]
		if !ok {
			continue
		}
		s := &mt.Slaves[j]
		prev := t.prevLost[lostKey{name, l.Direction}]
		// A bucket the previous reading lacked started from zero.
		d, ok := delta(prev, true, flowCount{l.Bytes, l.Packets}, time.Time{}, t.prevAt)
		var bps float64
		if ok && seconds > 0 {
			bps = float64(d.bytes) * 8 / seconds
		}
		if l.Direction == flowmeter.Rx {
			s.LostRxBytes, s.LostRxBps = l.Bytes, bps
		} else {
			s.LostTxBytes, s.LostTxBps = l.Bytes, bps
		}
	}
	return mt
}

// perSlaveChoice is the prediction of frames the transmit hash never
// places: they are sent on each slave itself.
var perSlaveChoice = bonding.Choice{Outcome: bonding.Unpredictable, Index: -1,
	Reason: "sent on each slave by the bond or an agent bound to the slave (LACPDUs, LLDP, CDP, ARP monitor probes), not placed by the hash"}

// perSlave reports whether a transmitted frame is one the bond or an
// agent sends on a slave directly: slow protocols (LACP, marker) and
// LLDP, frames to the IEEE link-local group 01:80:c2:00:00:0x or to
// CDP's 01:00:0c:cc:cc:cc, and ARP when the ARP monitor probes on every
// slave.
func perSlave(f *flowmeter.Flow, arpMonitor bool) bool {
	d := f.DstMAC
	switch {
	case f.EtherType == 0x8809 || f.EtherType == 0x88cc:
		return true
	case d[0] == 0x01 && d[1] == 0x80 && d[2] == 0xc2 && d[3] == 0 && d[4] == 0 && d[5] <= 0x0f:
		return true
	case d == [6]byte{0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc}:
		return true
	case f.EtherType == 0x0806 && arpMonitor:
		return true
	}
	return false
}

// tlbRewriteChoice is the prediction of balance-tlb's frames under a
// policy that reads the source MAC.
var tlbRewriteChoice = bonding.Choice{Outcome: bonding.Unpredictable, Index: -1,
	Reason: "balance-tlb rewrites the source MAC to the slave's own after hashing, and the policy hashes the original"}

// localSet is the socket set of the bond's flow table, cached per table.
func (t *meterTracker) localSet(bs *model.BondSample) map[sockKey]struct{} {
	tab := bs.Flows
	if tab == nil {
		return nil
	}
	if c, ok := t.local[bs.Name]; ok && c.table == tab {
		return c.set
	}
	set := make(map[sockKey]struct{}, len(tab.Flows))
	for i := range tab.Flows {
		s := &tab.Flows[i].Socket
		set[sockKey{s.Proto, unmap(s.Local), unmap(s.Remote)}] = struct{}{}
	}
	t.local[bs.Name] = localSockets{tab, set}
	return set
}

func unmap(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// isLocal reports whether f belongs to a socket of set: a tx flow from
// its local address and port, an rx flow to them.
func isLocal(set map[sockKey]struct{}, f *flowmeter.Flow) bool {
	if f.Proto != bonding.ProtoTCP && f.Proto != bonding.ProtoUDP {
		return false
	}
	src := netip.AddrPortFrom(f.Src.Unmap(), f.SrcPort)
	dst := netip.AddrPortFrom(f.Dst.Unmap(), f.DstPort)
	k := sockKey{f.Proto, src, dst}
	if f.Direction == flowmeter.Rx {
		k.local, k.remote = dst, src
	}
	_, ok := set[k]
	return ok
}

// runningKernel is the kernel the live host's hash is computed for when
// no flow table says (6.12's hash when /proc does not tell).
func runningKernel() bonding.KernelVersion {
	k, _, err := bonding.RunningKernel(os.DirFS("/"))
	if err != nil {
		return bonding.KernelVersion{Major: 6, Minor: 12}
	}
	return k
}

// hashKernel is the kernel version the predictions follow: the flow
// reader's (the demo's simulated one), else the running kernel's.
func (s *Sampler) hashKernel() bonding.KernelVersion {
	if s.flows != nil && !s.flows.readAt.IsZero() {
		return s.flows.kernel
	}
	if s.kernel == nil {
		s.kernel = new(runningKernel())
	}
	return *s.kernel
}

// rankEntry is a flow of a reading (index i) with its rate and bytes:
// what the ranking sorts, 24 bytes where a flow is a few hundred, so
// comparisons rarely reach into the flows themselves.
type rankEntry struct {
	bps   float64
	bytes uint64
	i     int32
}

// rankFlows orders entries by bit rate, highest first; ties (idle flows,
// the first reading) by bytes, then by key, so the order is stable from
// one reading to the next.
func rankFlows(entries []rankEntry, flows []flowmeter.Flow) {
	slices.SortFunc(entries, func(a, b rankEntry) int {
		if a.bps != b.bps {
			if a.bps > b.bps {
				return -1
			}
			return 1
		}
		if a.bytes != b.bytes {
			if a.bytes > b.bytes {
				return -1
			}
			return 1
		}
		return compareKeys(&flows[a.i].Key, &flows[b.i].Key)
	})
}

func compareKeys(a, b *flowmeter.Key) int {
	if c := cmp.Compare(a.Ifindex, b.Ifindex); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Direction, b.Direction); c != 0 {
		return c
	}
	if c := a.Src.Compare(b.Src); c != 0 {
		return c
	}
	if c := a.Dst.Compare(b.Dst); c != 0 {
		return c
	}
	if c := cmp.Compare(a.SrcPort, b.SrcPort); c != 0 {
		return c
	}
	if c := cmp.Compare(a.DstPort, b.DstPort); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Proto, b.Proto); c != 0 {
		return c
	}
	if c := cmp.Compare(a.EtherType, b.EtherType); c != 0 {
		return c
	}
	if c := cmp.Compare(a.VLAN, b.VLAN); c != 0 {
		return c
	}
	switch {
	case a.Fragment == b.Fragment:
		return 0
	case a.Fragment:
		return 1
	}
	return -1
}
