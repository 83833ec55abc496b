package flowmeter

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// The flags of flow_key (bpf/flowmeter.c).
const (
	keyFragment       = 1
	keyQuoted         = 2
	keyQuotedFragment = 4
	keyIP             = 8
	keyRx             = 16
	keyTag8021Q       = 32
	keyTag8021AD      = 64
)

// windowNanos is the program's rate window (WINDOW_NS): a CPU whose clock
// is older than a few of them counts every packet again at its next one.
const windowNanos = 10_000_000

// ebpfMeter is the in-kernel meter: one loaded program pair and its maps,
// attached to every slave Sync names.
type ebpfMeter struct {
	mu      sync.Mutex
	opts    Options
	objs    meterObjects
	owner   owner
	slaves  map[int]*attachment
	noTCX   bool // the kernel has no TCX: every slave goes through clsact
	warn    map[int]string
	keys    []meterFlowKey
	vals    []meterFlowCounters
	idle    []meterFlowKey
	keys4   []meterFlow4Key
	vals4   []meterFlowCounters
	idle4   []meterFlow4Key
	ekeys   []meterErrorKey
	evals   []meterFlowCounters
	eidle   []meterErrorKey
	cpus    []meterCpuState
	batchOK bool
	stats   io.Closer // the kernel's run time statistics, while held
}

// noL4HashWarning keys the warning of a meter that cannot read l4_hash
// (warnings are per ifindex; no interface has this one).
const (
	noL4HashWarning = -1
	noStatsWarning  = -2
)

// loadWithoutL4Hash loads the meter with its l4_hash read turned off,
// relocated against the object's own types instead of the kernel's (which
// may be missing): the read is dead code the verifier drops, whatever its
// relocations resolve to.
func loadWithoutL4Hash(spec *ebpf.CollectionSpec, objs *meterObjects) error {
	v, ok := spec.Variables["read_l4_hash"]
	if !ok {
		return errors.New("no read_l4_hash in the meter's object")
	}
	if err := v.Set(uint8(0)); err != nil {
		return err
	}
	return spec.LoadAndAssign(objs, &ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: spec.Types}})
}

// errorFlows is the size of the ICMP errors' map for a flow map of n.
func errorFlows(n int) int {
	return max(n/8, 64)
}

// setBudget gives the program its budget: packets per second per CPU
// counted one by one (0 in the program: no limit).
func setBudget(spec *ebpf.CollectionSpec, budget int) error {
	v, ok := spec.Variables["budget"]
	if !ok {
		return errors.New("no budget in the meter's object")
	}
	return v.Set(uint64(max(budget, 0)))
}

// openEBPF loads the meter's program and maps. Nothing is attached yet.
func openEBPF(opts Options) (*ebpfMeter, error) {
	// Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK.
	_ = rlimit.RemoveMemlock()
	spec, err := loadMeter()
	if err != nil {
		return nil, err
	}
	spec.Maps[meterMapFlows].MaxEntries = uint32(opts.MaxFlows)
	spec.Maps[meterMapFlows4].MaxEntries = uint32(opts.MaxFlows)
	spec.Maps[meterMapErrors].MaxEntries = uint32(errorFlows(opts.MaxFlows))
	if err := setBudget(spec, opts.Budget); err != nil {
		return nil, err
	}
	m := &ebpfMeter{opts: opts, owner: self(), slaves: map[int]*attachment{}, warn: map[int]string{}, batchOK: true}
	if err := spec.LoadAndAssign(&m.objs, nil); err != nil {
		// Reading skb->l4_hash needs the kernel's BTF and
		// bpf_probe_read_kernel; without them the meter still counts.
		if err2 := loadWithoutL4Hash(spec, &m.objs); err2 != nil {
			var ve *ebpf.VerifierError
			if errors.As(err, &ve) {
				return nil, fmt.Errorf("the kernel's verifier refused the flow meter: %+v", ve)
			}
			return nil, fmt.Errorf("loading the eBPF flow meter: %w", err)
		}
		m.warn[noL4HashWarning] = "the kernel does not show the socket buffer's l4_hash to the meter (" + err.Error() + "): encap3+4 predictions of flows with a socket or NIC hash may be wrong"
	}
	if opts.KernelStats {
		if m.stats, err = ebpf.EnableStats(unix.BPF_STATS_RUN_TIME); err != nil {
			m.warn[noStatsWarning] = "the kernel does not time the meter's programs: " + err.Error()
		}
	}
	// What a bondtop killed before its Close left behind.
	if err := removeStaleFilters(m.owner, nil); err != nil {
		m.warn[0] = "removing a previous run's filters: " + err.Error()
	}
	return m, nil
}

func (m *ebpfMeter) Sync(slaves map[int]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for ifindex, a := range m.slaves {
		if _, ok := slaves[ifindex]; ok {
			continue
		}
		if err := a.detach(); err != nil {
			errs = append(errs, err)
		}
		delete(m.slaves, ifindex)
		delete(m.warn, ifindex)
		// Its flows go at the next Read; its lost bytes now, so a slave
		// that comes back starts from zero.
		for _, d := range []Direction{Tx, Rx} {
			_ = m.objs.Lost.Delete(&meterLostKey{Ifindex: uint32(ifindex), Direction: uint32(d)})
		}
	}
	for ifindex, name := range slaves {
		if a, ok := m.slaves[ifindex]; ok {
			a.name = name
			continue
		}
		a, err := m.attach(ifindex, name)
		if err != nil {
			m.warn[ifindex] = err.Error()
			errs = append(errs, err)
			continue
		}
		delete(m.warn, ifindex)
		m.slaves[ifindex] = a
	}
	return errors.Join(errs...)
}

// attach hooks both programs to a slave: TCX where the kernel has it and
// the caller did not ask for clsact, else a clsact qdisc and two filters.
func (m *ebpfMeter) attach(ifindex int, name string) (*attachment, error) {
	a := &attachment{ifindex: ifindex, name: name}
	if !m.opts.ForceClsact && !m.noTCX {
		err := a.attachTCX(m.objs.MeterEgress, m.objs.MeterIngress)
		if err == nil {
			return a, nil
		}
		if !errors.Is(err, ebpf.ErrNotSupported) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		m.noTCX = true
	}
	if err := a.attachClsact(m.owner, m.objs.MeterEgress, m.objs.MeterIngress); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return a, nil
}

func (m *ebpfMeter) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for ifindex, a := range m.slaves {
		if err := a.detach(); err != nil {
			errs = append(errs, err)
		}
		delete(m.slaves, ifindex)
	}
	if err := m.objs.Close(); err != nil {
		errs = append(errs, err)
	}
	if m.stats != nil {
		m.stats.Close()
		m.stats = nil
	}
	return errors.Join(errs...)
}

func (m *ebpfMeter) Read() (Reading, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := Reading{Source: SourceEBPF, SampleRate: 1, Budget: max(m.opts.Budget, 0),
		MapSize: int(m.objs.Flows4.MaxEntries() + m.objs.Flows.MaxEntries() + m.objs.Errors.MaxEntries())}
	n4, err := readMap(m.objs.Flows4, &m.keys4, &m.vals4, &m.batchOK)
	if err != nil {
		return r, err
	}
	n, err := readMap(m.objs.Flows, &m.keys, &m.vals, &m.batchOK)
	if err != nil {
		return r, err
	}
	en, err := readMap(m.objs.Errors, &m.ekeys, &m.evals, &m.batchOK)
	if err != nil {
		return r, err
	}
	r.Time = time.Now()
	boot := bootNanos()
	toWall := bootClock(r.Time)
	idleBefore := uint64(0)
	if boot > uint64(m.opts.IdleTimeout) {
		idleBefore = boot - uint64(m.opts.IdleTimeout)
	}
	r.Flows = make([]Flow, 0, n4+n+en)
	m.idle4, m.idle, m.eidle = m.idle4[:0], m.idle[:0], m.eidle[:0]
	add := func(ifindex uint32, v *meterFlowCounters) *Flow {
		a := m.slaves[int(ifindex)]
		if v.LastSeen < idleBefore || a == nil {
			// Idle, or of a slave no longer metered: its entry goes.
			return nil
		}
		r.Flows = append(r.Flows, Flow{})
		f := &r.Flows[len(r.Flows)-1]
		decodeCounters(v, &f.Counters, toWall)
		f.Slave = a.name
		return f
	}
	for i := range n4 {
		if f := add(m.keys4[i].Ifindex, &m.vals4[i]); f != nil {
			decodeKey4(&m.keys4[i], &f.Key)
		} else {
			m.idle4 = append(m.idle4, m.keys4[i])
		}
	}
	for i := range n {
		if f := add(m.keys[i].Ifindex, &m.vals[i]); f != nil {
			decodeKey(&m.keys[i], &f.Key)
		} else {
			m.idle = append(m.idle, m.keys[i])
		}
	}
	for i := range en {
		k := &m.ekeys[i]
		if f := add(k.Flow.Ifindex, &m.evals[i]); f != nil {
			decodeKey(&k.Flow, &f.Key)
			decodeQuoted(k, &f.Key)
		} else {
			m.eidle = append(m.eidle, *k)
		}
	}
	r.MapEntries = n4 + n + en - len(m.idle4) - len(m.idle) - len(m.eidle)
	deleteKeys(m.objs.Flows4, m.idle4, m.batchOK)
	deleteKeys(m.objs.Flows, m.idle, m.batchOK)
	deleteKeys(m.objs.Errors, m.eidle, m.batchOK)
	r.Lost, err = m.readLost()
	if err != nil {
		return r, err
	}
	if err := m.readCPUs(&r, boot); err != nil {
		return r, err
	}
	r.Attach = m.attachKind()
	r.Warnings = m.warnings()
	if m.stats != nil {
		for _, p := range []*ebpf.Program{m.objs.MeterEgress, m.objs.MeterIngress} {
			if st, err := p.Stats(); err == nil {
				r.KernelCPU += st.Runtime
				r.KernelRuns += st.RunCount
			}
		}
	}
	return r, nil
}

// readCPUs fills r's SampleRate (the highest N a CPU counts 1 in N with
// now) and packet totals from the programs' per-CPU state. A CPU that saw
// no packet for a while counts its next one whatever its N says: its rate
// window starts again.
func (m *ebpfMeter) readCPUs(r *Reading, boot uint64) error {
	if err := m.objs.Cpu.Lookup(uint32(0), &m.cpus); err != nil {
		return fmt.Errorf("reading the meter's per-CPU state: %w", err)
	}
	r.SampleRate = 1
	for i := range m.cpus {
		c := &m.cpus[i]
		if c.Rate > 1 && boot-c.Now < 3*windowNanos {
			r.SampleRate = max(r.SampleRate, int(c.Rate))
		}
		r.SeenPackets += c.SeenTotal
		r.CountedPackets += c.CountedTotal
		r.EstimateVariance += c.Variance
	}
	return nil
}

// readMap copies a whole flow map into keys and vals, by batches where the
// kernel has them (5.6+; batchOK turns false where it has not), else
// element by element.
func readMap[K any](fm *ebpf.Map, keys *[]K, vals *[]meterFlowCounters, batchOK *bool) (int, error) {
	size := int(fm.MaxEntries())
	if cap(*keys) < size {
		*keys = make([]K, size)
		*vals = make([]meterFlowCounters, size)
	}
	*keys, *vals = (*keys)[:size], (*vals)[:size]
	if *batchOK {
		n, err := readBatches(fm, *keys, *vals)
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, ebpf.ErrNotSupported) {
			return 0, err
		}
		*batchOK = false
	}
	n := 0
	it := fm.Iterate()
	for n < size && it.Next(&(*keys)[n], &(*vals)[n]) {
		n++
	}
	return n, it.Err()
}

// readBatches reads a map in chunks. A hash map answers ENOSPC when a
// bucket does not fit in the chunk: then it starts over with larger ones.
func readBatches[K any](fm *ebpf.Map, keys []K, vals []meterFlowCounters) (int, error) {
	size := len(keys)
	chunk := min(size, 4096)
	for {
		var cursor ebpf.MapBatchCursor
		n := 0
		for {
			end := min(n+chunk, size)
			if end == n {
				return n, nil
			}
			got, err := fm.BatchLookup(&cursor, keys[n:end], vals[n:end], nil)
			n += got
			if errors.Is(err, ebpf.ErrKeyNotExist) {
				return n, nil
			}
			if errors.Is(err, unix.ENOSPC) && chunk < size {
				break
			}
			if err != nil {
				return n, err
			}
		}
		chunk = min(size, chunk*4)
	}
}

func deleteKeys[K any](fm *ebpf.Map, keys []K, batchOK bool) {
	if len(keys) == 0 {
		return
	}
	if batchOK {
		if _, err := fm.BatchDelete(keys, nil); err == nil {
			return
		}
	}
	for i := range keys {
		// Gone already is fine: another reader deleted it.
		_ = fm.Delete(&keys[i])
	}
}

func (m *ebpfMeter) readLost() ([]Lost, error) {
	var (
		k    meterLostKey
		v    []meterLostCounters // one per CPU
		lost []Lost
	)
	it := m.objs.Lost.Iterate()
	for it.Next(&k, &v) {
		a := m.slaves[int(k.Ifindex)]
		if a == nil {
			continue
		}
		l := Lost{Ifindex: int(k.Ifindex), Slave: a.name, Direction: Direction(k.Direction)}
		for i := range v {
			l.Bytes += v[i].Bytes
			l.Packets += v[i].Packets
		}
		lost = append(lost, l)
	}
	sort.Slice(lost, func(i, j int) bool {
		if lost[i].Ifindex != lost[j].Ifindex {
			return lost[i].Ifindex < lost[j].Ifindex
		}
		return lost[i].Direction < lost[j].Direction
	})
	return lost, it.Err()
}

func (m *ebpfMeter) attachKind() string {
	kinds := map[string]bool{}
	for _, a := range m.slaves {
		kinds[a.kind()] = true
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, "+")
}

func (m *ebpfMeter) warnings() []string {
	var w []string
	for _, s := range m.warn {
		w = append(w, s)
	}
	sort.Strings(w)
	return w
}

// decodeKey turns the kernel's key into a Key.
func decodeKey(k *meterFlowKey, out *Key) {
	*out = Key{
		Ifindex: int(k.Ifindex), VLAN: k.Vlan, EtherType: k.Ethertype, Proto: k.Proto,
		SrcPort: k.Sport, DstPort: k.Dport, Fragment: k.Flags&keyFragment != 0,
		ICMPType: k.IcmpType, ICMPCode: k.IcmpCode,
	}
	if k.Flags&keyRx != 0 {
		out.Direction = Rx
	}
	switch {
	case k.Flags&keyTag8021Q != 0:
		out.FrameTPID = 0x8100
	case k.Flags&keyTag8021AD != 0:
		out.FrameTPID = 0x88a8
	}
	if k.Flags&keyIP == 0 {
		return
	}
	v6 := k.Ethertype == bonding.EtherTypeIPv6
	out.Src, out.Dst = addr(&k.Src, v6), addr(&k.Dst, v6)
}

// decodeKey4 turns the kernel's key of an IPv4 flow into a Key.
func decodeKey4(k *meterFlow4Key, out *Key) {
	*out = Key{
		Ifindex: int(k.Ifindex), VLAN: k.Vlan, EtherType: bonding.EtherTypeIPv4, Proto: k.Proto,
		SrcPort: k.Sport, DstPort: k.Dport, Fragment: k.Flags&keyFragment != 0,
		ICMPType: k.IcmpType, ICMPCode: k.IcmpCode,
		Src: netip.AddrFrom4(k.Src), Dst: netip.AddrFrom4(k.Dst),
	}
	if k.Flags&keyRx != 0 {
		out.Direction = Rx
	}
	switch {
	case k.Flags&keyTag8021Q != 0:
		out.FrameTPID = 0x8100
	case k.Flags&keyTag8021AD != 0:
		out.FrameTPID = 0x88a8
	}
}

// decodeQuoted adds the header an ICMP error quotes to its Key.
func decodeQuoted(k *meterErrorKey, out *Key) {
	if k.Flow.Flags&keyQuoted == 0 {
		return
	}
	v6 := k.Flow.Ethertype == bonding.EtherTypeIPv6
	out.Quoted = bonding.Quoted{
		Src: addr(&k.QuotedSrc, v6), Dst: addr(&k.QuotedDst, v6), Proto: k.QuotedProto,
		SrcPort: k.QuotedSport, DstPort: k.QuotedDport, Fragment: k.Flow.Flags&keyQuotedFragment != 0,
	}
}

// addr reads an address as the program stores it: IPv4 in the first four
// bytes.
func addr(b *[16]byte, v6 bool) netip.Addr {
	if v6 {
		return netip.AddrFrom16(*b)
	}
	return netip.AddrFrom4([4]byte(b[:4]))
}

func decodeCounters(v *meterFlowCounters, out *Counters, toWall func(uint64) time.Time) {
	*out = Counters{
		Bytes: v.Bytes, Packets: v.Packets,
		FirstSeen: toWall(v.FirstSeen), LastSeen: toWall(v.LastSeen),
		SrcMAC: v.SrcMac, DstMAC: v.DstMac, SkbHash: v.SkbHash, L4Hash: v.L4Hash != 0,
		IngressIfindex: int(v.IngressIfindex), Sampled: v.Sampled != 0,
	}
}

// bootNanos is CLOCK_BOOTTIME, the program's clock.
func bootNanos() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	return uint64(ts.Nano())
}

// bootClock maps CLOCK_BOOTTIME nanoseconds to wall-clock time, anchored
// at now.
func bootClock(now time.Time) func(uint64) time.Time {
	boot := bootNanos()
	return func(ns uint64) time.Time {
		return now.Add(-time.Duration(boot - ns))
	}
}
