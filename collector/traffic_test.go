package collector

import (
	"encoding/json"
	"errors"
	"maps"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/model"
)

// The flow meter stands in here for the kernel: the real meter is tested on
// veth pairs and in the lab by its own package. These tests judge what the
// collector makes of its readings.

// fakeMeter hands out the readings a test sets and records Sync calls.
type fakeMeter struct {
	syncs   []map[int]string
	reading flowmeter.Reading
	err     error
	reads   int
}

func (m *fakeMeter) Sync(s map[int]string) error {
	m.syncs = append(m.syncs, maps.Clone(s))
	return nil
}

func (m *fakeMeter) Read() (flowmeter.Reading, error) {
	m.reads++
	r := m.reading
	r.Flows = append([]flowmeter.Flow(nil), m.reading.Flows...)
	return r, m.err
}

func (m *fakeMeter) Close() error { return nil }

// Ifindex numbers eth0, eth1, ... 10, 11, ...
func (m *fakeMeter) Ifindex(name string) (int, error) {
	if !strings.HasPrefix(name, "eth") || len(name) != 4 {
		return 0, errors.New("no such interface " + name)
	}
	return 10 + int(name[3]-'0'), nil
}

// bondSource is a Source with one bond the test edits, and the age of
// its counters when the test sets one.
type bondSource struct {
	bond        bonding.Bond
	countersAge time.Duration
}

func (s *bondSource) Read() (Reading, error) {
	b := s.bond
	b.Slaves = append([]bonding.Slave(nil), s.bond.Slaves...)
	return Reading{Bonds: []bonding.Bond{b}, CountersAge: s.countersAge}, nil
}
func (s *bondSource) Close() error { return nil }

func xorBond(slaves ...string) bonding.Bond {
	b := bonding.Bond{Name: "bond0", Mode: new(bonding.ModeXOR), XmitHashPolicy: new("layer3+4"), MIIStatus: new("up")}
	for _, s := range slaves {
		b.Slaves = append(b.Slaves, bonding.Slave{Name: s, MIIStatus: new("up"), State: new("active")})
	}
	return b
}

var (
	k612 = bonding.KernelVersion{Major: 6, Minor: 12}
)

// hashedSlave is where layer3+4 sends f over slaves, by the bonding
// package's own hash (the judge of the prediction the collector adds).
func hashedSlave(t *testing.T, f flowmeter.Flow, slaves ...string) string {
	t.Helper()
	p := f.Packet()
	h, err := bonding.Hash(bonding.PolicyLayer34, &p, k612)
	if err != nil {
		t.Fatal(err)
	}
	return slaves[bonding.Pick(h, len(slaves))]
}

func otherSlave(s string) string {
	if s == "eth0" {
		return "eth1"
	}
	return "eth0"
}

func newMeterSampler(src Source, m flowmeter.Meter) (*Sampler, *collectortest.Clock) {
	clk := collectortest.NewClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	flows := &staticFlows{} // no sockets: the kernel version for the hash
	return NewSampler(src, Options{Interval: time.Second, Clock: clk.Now, Meter: m, Flows: flows}), clk
}

func TestMeasuredRatesAgreementAndGaps(t *testing.T) {
	src := &bondSource{bond: xorBond("eth0", "eth1")}
	m := &fakeMeter{}
	s, clk := newMeterSampler(src, m)

	a := collectortest.UDPFlow("eth0", flowmeter.Tx, 40000, 0)
	a.Slave = hashedSlave(t, a, "eth0", "eth1")
	a.Ifindex = 10 + int(a.Slave[3]-'0')
	wrong := collectortest.UDPFlow("eth0", flowmeter.Tx, 40001, 0)
	wrong.Slave = otherSlave(hashedSlave(t, wrong, "eth0", "eth1"))
	wrong.Ifindex = 10 + int(wrong.Slave[3]-'0')
	rx := collectortest.UDPFlow("eth1", flowmeter.Rx, 40000, 0)

	set := func(at time.Time, ab, wb, rb uint64) {
		fa, fw, fr := a, wrong, rx
		fa.Bytes, fa.Packets = ab, ab/100
		fw.Bytes, fw.Packets = wb, wb/100
		fr.Bytes, fr.Packets = rb, rb/100
		m.reading = flowmeter.Reading{Time: at, Source: flowmeter.SourceEBPF, SampleRate: 1, Flows: []flowmeter.Flow{fa, fw, fr},
			Lost: []flowmeter.Lost{{Ifindex: 11, Direction: flowmeter.Rx, Bytes: 1000}}, MapEntries: 3, MapSize: 1024}
	}
	set(clk.Now(), 1000, 2000, 5000)
	first := collectortest.MustSample(t, s).Bond("bond0").Measured
	if first == nil || first.Source != "ebpf" || first.HaveRates() {
		t.Fatalf("first reading: %+v, want ebpf without rates", first)
	}
	if len(m.syncs) != 1 || len(m.syncs[0]) != 2 || m.syncs[0][10] != "eth0" || m.syncs[0][11] != "eth1" {
		t.Fatalf("sync calls %v, want one with eth0=10 eth1=11", m.syncs)
	}

	clk.Advance(2 * time.Second)
	set(clk.Now(), 1000+250_000, 2000+50_000, 5000+1_000_000)
	mt := collectortest.MustSample(t, s).Bond("bond0").Measured
	if len(m.syncs) != 1 {
		t.Fatalf("Sync called again without a slave change: %v", m.syncs)
	}
	if len(mt.Flows) != 3 || mt.Seconds != 2 {
		t.Fatalf("%d flows over %vs, want 3 over 2s", len(mt.Flows), mt.Seconds)
	}
	// Ranked by rate: rx 4 Mbit/s, a 1 Mbit/s, wrong 0.2 Mbit/s.
	want := []float64{4e6, 1e6, 0.2e6}
	for i, f := range mt.Flows {
		if !f.HaveRate || f.Bps != want[i] {
			t.Fatalf("flow %d: %v bit/s (have %v), want %v", i, f.Bps, f.HaveRate, want[i])
		}
	}
	if mt.Flows[0].Direction != flowmeter.Rx || mt.Flows[0].PredictedSlave() != "" {
		t.Fatalf("rx flow first, without prediction: %+v", mt.Flows[0])
	}
	if mt.Flows[1].Disagrees() || !mt.Flows[2].Disagrees() || mt.Flows[2].PredictedSlave() != otherSlave(wrong.Slave) {
		t.Fatalf("agreement marks wrong: %+v / %+v", mt.Flows[1].Predicted, mt.Flows[2].Predicted)
	}
	ag := mt.Agreement
	if ag.Flows != 2 || ag.Agree != 1 || ag.Unpredictable != 0 || ag.BytesAgreeShare == nil || *ag.BytesAgreeShare != 250_000.0/300_000 {
		t.Fatalf("agreement %+v (share %v), want 2 flows, 1 agrees, 5/6 of the bytes", ag, ag.BytesAgreeShare)
	}
	eth1 := mt.Slave("eth1")
	if eth1.RxBps != 4e6 || eth1.RxFlows != 1 || eth1.LostRxBytes != 1000 || eth1.LostRxBps != 0 {
		t.Fatalf("eth1 sums %+v", eth1)
	}

	// The rx flow's entry was re-made (its counter went back): a gap,
	// no rate; the wrong flow is gone (idle); lost bytes grew.
	clk.Advance(time.Second)
	fa, fr := a, rx
	fa.Bytes, fr.Bytes = 1000+250_000+125_000, 10
	fa.Packets, fr.Packets = fa.Bytes/100, 0
	m.reading.Flows = []flowmeter.Flow{fa, fr}
	m.reading.Lost[0].Bytes = 1000 + 500
	m.reading.Time = clk.Now()
	mt = collectortest.MustSample(t, s).Bond("bond0").Measured
	if len(mt.Flows) != 2 || mt.Flows[0].Bps != 1e6 || mt.Flows[1].HaveRate {
		t.Fatalf("after a gap: %+v", mt.Flows)
	}
	if got := mt.Slave("eth1").LostRxBps; got != 4000 {
		t.Fatalf("lost rx rate %v, want 4000 bit/s", got)
	}

	// The meter cannot be read: a warning once, the last traffic stays.
	m.err = errors.New("batch lookup: bad file descriptor")
	clk.Advance(time.Second)
	snap := collectortest.MustSample(t, s)
	if snap.Bond("bond0").Measured != mt || len(snap.Warnings) != 1 || !strings.Contains(snap.Warnings[0], "batch lookup") {
		t.Fatalf("read error: traffic %p (want %p), warnings %v", snap.Bond("bond0").Measured, mt, snap.Warnings)
	}
	clk.Advance(time.Second)
	if snap := collectortest.MustSample(t, s); len(snap.Warnings) != 0 {
		t.Fatalf("the same error again: %v", snap.Warnings)
	}
	m.err = nil

	// A slave leaves the bond: the meter is synced to the rest.
	src.bond.Slaves = src.bond.Slaves[:1]
	clk.Advance(time.Second)
	collectortest.MustSample(t, s)
	if len(m.syncs) != 2 || len(m.syncs[1]) != 1 || m.syncs[1][10] != "eth0" {
		t.Fatalf("sync after the slave left: %v", m.syncs)
	}
}

func TestMeasuredLocalSocketsAndNewFlows(t *testing.T) {
	src := &bondSource{bond: xorBond("eth0", "eth1")}
	m := &fakeMeter{}
	clk := collectortest.NewClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	sock := model.Socket{ID: 1, Proto: bonding.ProtoUDP, Local: netip.MustParseAddrPort("10.0.0.1:40000"), Remote: netip.MustParseAddrPort("10.0.0.2:53"),
		Path: model.Path{Dev: "bond0", Bond: "bond0", SrcMAC: collectortest.HostMAC, DstMAC: collectortest.PeerMAC, HaveDstMAC: true}}
	s := NewSampler(src, Options{Clock: clk.Now, Meter: m, Flows: &staticFlows{sockets: []model.Socket{sock}}})
	m.reading = flowmeter.Reading{Time: clk.Now(), Source: flowmeter.SourceSampled, SampleRate: 100}
	collectortest.MustSample(t, s)

	clk.Advance(time.Second)
	prev := clk.Now().Add(-time.Second)
	tx := collectortest.UDPFlow("eth0", flowmeter.Tx, 40000, 8000)
	tx.FirstSeen = clk.Now().Add(-time.Millisecond) // new since the last reading: all its bytes count
	rx := collectortest.UDPFlow("eth1", flowmeter.Rx, 40000, 8000)
	rx.FirstSeen = prev.Add(-time.Minute) // older than the last reading, yet absent from it: no rate
	fwd := collectortest.UDPFlow("eth0", flowmeter.Tx, 40002, 100)
	fwd.Src = netip.MustParseAddr("10.9.0.7") // a VM's
	m.reading.Flows = []flowmeter.Flow{tx, rx, fwd}
	m.reading.Time = clk.Now()
	mt := collectortest.MustSample(t, s).Bond("bond0").Measured
	if mt.Source != "sampled" || mt.SampleRate != 100 {
		t.Fatalf("source %q 1:%d, want sampled 1:100", mt.Source, mt.SampleRate)
	}
	if len(mt.Flows) != 3 {
		t.Fatalf("%d flows, want 3", len(mt.Flows))
	}
	for _, f := range mt.Flows {
		switch {
		case f.Src.String() == "10.9.0.7":
			if f.Local || f.Bps != 800 {
				t.Fatalf("forwarded flow: local %v, %v bit/s; want not local, 800", f.Local, f.Bps)
			}
		case f.Direction == flowmeter.Tx:
			if !f.Local || !f.HaveRate || f.Bps != 64000 {
				t.Fatalf("local tx flow: local %v rate %v %v", f.Local, f.HaveRate, f.Bps)
			}
		default:
			if !f.Local || f.HaveRate {
				t.Fatalf("local rx flow: local %v, rate %v (want local, no rate)", f.Local, f.HaveRate)
			}
		}
	}
}

func TestMeasuredSocketsOnlyAndJSON(t *testing.T) {
	src := &bondSource{bond: xorBond("eth0", "eth1")}
	clk := collectortest.NewClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	s := NewSampler(src, Options{Clock: clk.Now, MeterWhy: "the flow meter needs root"})
	b := collectortest.MustSample(t, s).Bond("bond0")
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Traffic map[string]any `json:"traffic"`
		RxBps   any            `json:"rx_bps"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	tr := got.Traffic
	if tr["source"] != "sockets" || tr["why"] != "the flow meter needs root" || tr["sample_rate"] != nil || tr["agreement"] != nil {
		t.Fatalf("traffic without a meter: %v", tr)
	}
	if _, ok := tr["flows"].([]any); !ok {
		t.Fatalf("flows must be [] not null: %v", tr)
	}

	// With a meter: every key of the outline, nulls where unknown.
	m := &fakeMeter{}
	s2, clk2 := newMeterSampler(src, m)
	m.reading = flowmeter.Reading{Time: clk2.Now(), Source: flowmeter.SourceEBPF, SampleRate: 1}
	collectortest.MustSample(t, s2)
	clk2.Advance(time.Second)
	arp := flowmeter.Flow{Slave: "eth1"}
	arp.Ifindex, arp.Direction, arp.EtherType, arp.Bytes = 11, flowmeter.Rx, 0x0806, 60
	// Counted 1 in 4 above the meter's budget: an estimate.
	arp.Sampled = true
	m.reading = flowmeter.Reading{Time: clk2.Now(), Source: flowmeter.SourceEBPF, SampleRate: 4, Flows: []flowmeter.Flow{collectortest.UDPFlow("eth0", flowmeter.Tx, 40000, 1000), arp}}
	out, err = json.Marshal(collectortest.MustSample(t, s2).Bond("bond0").Measured)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Source     string           `json:"source"`
		SampleRate int              `json:"sample_rate"`
		Flows      []map[string]any `json:"flows"`
		Agreement  map[string]any   `json:"agreement"`
		LostBytes  map[string]any   `json:"lost_bytes"`
	}
	if err := json.Unmarshal(out, &j); err != nil {
		t.Fatal(err)
	}
	if j.Source != "ebpf" || j.SampleRate != 4 || len(j.Flows) != 2 || len(j.LostBytes) != 2 {
		t.Fatalf("traffic JSON %s", out)
	}
	for _, k := range []string{"slave", "direction", "proto", "src", "dst", "sport", "dport", "src_mac", "dst_mac", "vlan", "bytes", "packets", "bps", "pps", "predicted_slave", "local", "sampled"} {
		if _, ok := j.Flows[0][k]; !ok {
			t.Fatalf("flow JSON lacks %q: %s", k, out)
		}
	}
	for _, k := range []string{"flows", "agree", "unpredictable", "bytes_agree_share"} {
		if _, ok := j.Agreement[k]; !ok {
			t.Fatalf("agreement JSON lacks %q: %s", k, out)
		}
	}
	udp, a := j.Flows[0], j.Flows[1]
	if udp["proto"] != "udp" || udp["direction"] != "tx" || udp["src"] != "10.0.0.1" || udp["predicted_slave"] == nil || udp["bps"] != 8000.0 {
		t.Fatalf("udp flow JSON %v", udp)
	}
	if udp["sampled"] != false || a["sampled"] != true {
		t.Fatalf("sampled: udp %v, arp %v", udp["sampled"], a["sampled"])
	}
	if a["proto"] != "arp" || a["src"] != nil || a["predicted_slave"] != nil || a["direction"] != "rx" {
		t.Fatalf("arp flow JSON %v", a)
	}
	// A recording reads back to the same JSON.
	var back model.MeasuredTraffic
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(out) {
		t.Fatalf("round trip:\n%s\n%s", out, again)
	}
	if top := (&model.MeasuredTraffic{Flows: make([]model.MeasuredFlow, 5)}).Top(2); len(top.Flows) != 2 {
		t.Fatalf("Top(2) kept %d flows", len(top.Flows))
	}
}

// TestMatchPreviousReading: each flow finds its entry of the previous
// reading whatever the order, with flows new, gone and moved.
func TestMatchPreviousReading(t *testing.T) {
	flow := func(port uint16) flowmeter.Flow { return collectortest.UDPFlow("eth0", flowmeter.Tx, port, 0) }
	tr := newMeterTracker(&fakeMeter{})
	for _, p := range []uint16{1, 2, 3, 4, 5} {
		f := flow(p)
		tr.prev = append(tr.prev, prevFlow{keyOf(&f.Key), flowCount{uint64(p), 0}})
	}
	// 2 3 (9 new) 4 5 1 (moved to the end); the same, reversed.
	for _, order := range [][]uint16{{2, 3, 9, 4, 5, 1}, {1, 5, 4, 9, 3, 2}} {
		var flows []flowmeter.Flow
		for _, p := range order {
			flows = append(flows, flow(p))
		}
		tr.index = nil
		got := tr.match(flows)
		for i, p := range order {
			want := int32(p) - 1
			if p == 9 {
				want = -1
			}
			if got[i] != want {
				t.Fatalf("order %v: flow %d matched %d, want %d", order, p, got[i], want)
			}
		}
	}
}

// TestMeasuredPerSlaveFrames: LACPDUs leave on every slave, sent there by
// the bond: unpredictable, never a disagreement.
func TestMeasuredPerSlaveFrames(t *testing.T) {
	src := &bondSource{bond: xorBond("eth0", "eth1")}
	src.bond.Mode = new(bonding.Mode8023AD)
	m := &fakeMeter{}
	s, clk := newMeterSampler(src, m)
	lacpdu := func(slave string, bytes uint64) flowmeter.Flow {
		f := flowmeter.Flow{Slave: slave}
		f.Ifindex, f.Direction, f.EtherType = 10+int(slave[3]-'0'), flowmeter.Tx, 0x8809
		f.SrcMAC, f.DstMAC = collectortest.HostMAC, [6]byte{0x01, 0x80, 0xc2, 0, 0, 0x02}
		f.Bytes, f.Packets = bytes, bytes/124
		return f
	}
	m.reading = flowmeter.Reading{Time: clk.Now(), Source: flowmeter.SourceEBPF, SampleRate: 1, Flows: []flowmeter.Flow{lacpdu("eth0", 124), lacpdu("eth1", 124)}}
	collectortest.MustSample(t, s)
	clk.Advance(time.Second)
	m.reading = flowmeter.Reading{Time: clk.Now(), Source: flowmeter.SourceEBPF, SampleRate: 1, Flows: []flowmeter.Flow{lacpdu("eth0", 248), lacpdu("eth1", 248)}}
	mt := collectortest.MustSample(t, s).Bond("bond0").Measured
	a := mt.Agreement
	if a.Flows != 2 || a.Unpredictable != 2 || a.Disagree() != 0 || mt.Flows[0].ProtoName() != "lacp" {
		t.Fatalf("LACPDUs: agreement %+v, %s", a, mt.Flows[0].ProtoName())
	}
}

// A failed Sync is tried again at the next sample and said once.
type flakyMeter struct {
	fakeMeter
	fails int
}

func (m *flakyMeter) Sync(s map[int]string) error {
	m.syncs = append(m.syncs, maps.Clone(s))
	if m.fails > 0 {
		m.fails--
		return errors.New("eth1: attach: device or resource busy")
	}
	return nil
}

func TestMeterSyncRetries(t *testing.T) {
	src := &bondSource{bond: xorBond("eth0", "eth1")}
	m := &flakyMeter{fails: 2}
	s, clk := newMeterSampler(src, m)
	var warned int
	for range 4 {
		snap := collectortest.MustSample(t, s)
		for _, w := range snap.Warnings {
			if strings.Contains(w, "device or resource busy") {
				warned++
			}
		}
		clk.Advance(time.Second)
	}
	if len(m.syncs) != 3 || warned != 1 {
		t.Fatalf("%d Sync calls (want 3: two failures, one success), warned %d times (want 1)", len(m.syncs), warned)
	}
}

// balance-tlb rewrites the source MAC after hashing: under layer2 its
// frames are not re-hashed (no false disagreement); under layer3+4 they are.
func TestMeasuredTLBRewrite(t *testing.T) {
	for _, tc := range []struct {
		policy      string
		predictable bool
	}{{"layer2", false}, {"layer3+4", true}} {
		src := &bondSource{bond: xorBond("eth0", "eth1")}
		src.bond.Mode, src.bond.XmitHashPolicy, src.bond.TLBDynamicLB = new(bonding.ModeTLB), new(tc.policy), new(0)
		m := &fakeMeter{}
		s, clk := newMeterSampler(src, m)
		f := collectortest.UDPFlow("eth0", flowmeter.Tx, 40000, 1000)
		f.SrcMAC = [6]byte{2, 0, 0, 0, 0, 0x77} // the slave's own, rewritten
		m.reading = flowmeter.Reading{Time: clk.Now(), Source: flowmeter.SourceEBPF, SampleRate: 1, Flows: []flowmeter.Flow{f}}
		mt := collectortest.MustSample(t, s).Bond("bond0").Measured
		if got := mt.Flows[0].PredictedSlave() != ""; got != tc.predictable {
			t.Errorf("balance-tlb %s: predicted %q (%s), want predictable %v", tc.policy, mt.Flows[0].PredictedSlave(), mt.Flows[0].Predicted.Reason, tc.predictable)
		}
		// The first reading judges the cumulative bytes.
		if a := mt.Agreement; a.Flows != 1 || tc.predictable != (a.BytesAgreeShare != nil) {
			t.Errorf("balance-tlb %s: first reading's agreement %+v", tc.policy, a)
		}
	}
}

// TestMeterReadOncePerSecond: with the dashboard's MeterEvery, below a
// second's pace the meter is read on the first two ticks and then once a
// second, the snapshots in between carry the last read's traffic, whose
// rates span the second between two reads; a change of the bond's
// hashing reads at once; at a second, every tick; without MeterEvery,
// every tick.
func TestMeterReadOncePerSecond(t *testing.T) {
	src := &bondSource{bond: xorBond("eth0", "eth1")}
	m := &fakeMeter{}
	clk := collectortest.NewClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	s := NewSampler(src, Options{Interval: MinInterval, Clock: clk.Now, Meter: m, Flows: &staticFlows{}, MeterEvery: DashboardMeterEvery})
	f := collectortest.UDPFlow("eth0", flowmeter.Tx, 40000, 0)
	f.Slave = hashedSlave(t, f, "eth0", "eth1")
	f.Ifindex = 10 + int(f.Slave[3]-'0')
	tick := func(d time.Duration) *model.MeasuredTraffic {
		t.Helper()
		clk.Advance(d)
		f.Bytes += 1000 // 1000 bytes a tick
		m.reading = flowmeter.Reading{Time: clk.Now(), Source: flowmeter.SourceEBPF, SampleRate: 1, Flows: []flowmeter.Flow{f}, MapEntries: 1, MapSize: 1024}
		return collectortest.MustSample(t, s).Bond("bond0").Measured
	}
	tick(MinInterval)
	if last := tick(MinInterval); m.reads != 2 || last == nil || !last.HaveRates() {
		t.Fatalf("the first two ticks: %d reads, traffic %+v; want 2 reads and rates", m.reads, last)
	}
	last := tick(MinInterval)
	for range 27 {
		reads := m.reads
		mt := tick(MinInterval)
		if m.reads == reads && mt != last {
			t.Fatal("a tick without a read of the meter made new measured traffic")
		}
		last = mt
	}
	if m.reads != 4 {
		t.Fatalf("30 ticks at 100 ms (3 s) read the meter %d times, want 4 (the first two, then once a second)", m.reads)
	}
	if len(last.Flows) != 1 || !last.Flows[0].HaveRate || last.Seconds != 1 || last.Flows[0].Bps != 10*1000*8 {
		t.Fatalf("the last read's traffic: %+v, want one flow at 80 kbit/s over 1 s", last)
	}
	src.bond.Slaves[1].MIIStatus = new("down") // the hash now has one slave
	reads := m.reads
	tick(MinInterval)
	if m.reads != reads+1 {
		t.Fatal("a slave going down did not read the meter at once")
	}
	s.SetInterval(time.Second)
	reads = m.reads
	for range 3 {
		tick(time.Second)
	}
	if m.reads != reads+3 {
		t.Fatalf("3 ticks at 1 s read the meter %d times, want 3", m.reads-reads)
	}
	every := NewSampler(&bondSource{bond: xorBond("eth0", "eth1")}, Options{Interval: MinInterval, Clock: clk.Now, Meter: m, Flows: &staticFlows{}})
	reads = m.reads
	for range 5 {
		clk.Advance(MinInterval)
		collectortest.MustSample(t, every)
	}
	if m.reads != reads+5 {
		t.Fatalf("without MeterEvery, 5 ticks at 100 ms read the meter %d times, want 5", m.reads-reads)
	}
}
