package diagnose

import (
	"math"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// slave is an up, active slave of speed Mbit/s.
func slave(name string, speed int) model.SlaveSample {
	return model.SlaveSample{Slave: bonding.Slave{Name: name, MIIStatus: new("up"), State: new("active"),
		OperState: new("up"), SpeedMbps: new(speed), Duplex: new("full"), MTU: new(1500), LinkFailureCount: new(0)}}
}

// lacpSlave is an 802.3ad slave in aggregator 1 with a healthy partner.
func lacpSlave(name string, port int) model.SlaveSample {
	s := slave(name, 10000)
	st := bonding.StateActivity | bonding.StateShortTimeout | bonding.StateAggregation | bonding.StateSynchronization | bonding.StateCollecting | bonding.StateDistributing
	s.AggregatorID = new(1)
	s.Actor = &bonding.ActorPort{Port: bonding.Port{SystemMAC: new("02:00:00:00:00:01"), Key: new(15), PortNumber: new(port), PortState: new(st)}}
	s.Partner = &bonding.PartnerPort{Port: bonding.Port{SystemMAC: new("00:1c:73:aa:3b:01"), Key: new(1), PortNumber: new(0x100 + port), PortState: new(st)}}
	s.ActorChurnState, s.PartnerChurnState = new("monitoring"), new("monitoring")
	s.ActorChurnedCount, s.PartnerChurnedCount = new(0), new(0)
	return s
}

func xorBond(slaves ...model.SlaveSample) model.BondSample {
	return model.BondSample{Bond: bonding.Bond{Name: "bond0", Mode: new(bonding.ModeXOR), XmitHashPolicy: new("layer2"), MIIStatus: new("up"), MTU: new(1500)}, Slaves: slaves}
}

func lacpBond(slaves ...model.SlaveSample) model.BondSample {
	b := xorBond(slaves...)
	b.Mode = new(bonding.Mode8023AD)
	b.LACP = &bonding.LACP{AggregatorID: new(1), NumPorts: new(len(slaves)), MinLinks: new(0), PartnerMAC: new("00:1c:73:aa:3b:01"), ADSelect: new("stable")}
	return b
}

// analyzeOne runs the analyzer over samples of one bond, a second apart.
func analyzeOne(samples ...model.BondSample) []Finding {
	w := NewWindow(0)
	var last *model.Snapshot
	for i := range samples {
		snap := &model.Snapshot{Time: t0.Add(time.Duration(i) * time.Second), Bonds: []model.BondSample{samples[i]}}
		if i > 0 {
			snap.IntervalSeconds = 1
		}
		w.Fill(snap)
		last = snap
	}
	return last.Bonds[0].Findings
}

func withTx(b model.BondSample, bps ...float64) model.BondSample {
	b.Slaves = slices.Clone(b.Slaves)
	for i := range b.Slaves {
		b.Slaves[i].TxBps = new(bps[i])
		b.Slaves[i].RxBps = new(0.0)
	}
	return b
}

func TestLinkDifferences(t *testing.T) {
	mtu := xorBond(slave("eth0", 1000), slave("eth1", 1000))
	mtu.MTU = new(9000)
	mtu.Slaves[0].MTU = new(9000) // seed 003: jumbo frames set on one slave only

	speed := lacpBond(lacpSlave("eth0", 1), lacpSlave("eth1", 2))
	speed.Slaves[1].SpeedMbps = new(1000)
	speed.Slaves[1].Actor.Key = new(9) // 802.3ad keys encode speed

	// The slaves agree with each other, not with the bond: every one of
	// them drops the bond's frames.
	bondMTU := xorBond(slave("eth0", 1000), slave("eth1", 1000))
	bondMTU.MTU = new(9000)
	bondMTU.Slaves[0].MTU, bondMTU.Slaves[1].MTU = new(1500), new(1500)

	half := xorBond(slave("eth0", 100), slave("eth1", 100))
	half.Slaves[1].Duplex = new("half")

	for _, c := range []struct {
		name   string
		b      model.BondSample
		id     string
		slaves []string
	}{
		{"mtu", mtu, IDMTUMismatch, []string{"eth1"}},
		{"mtu of the bond", bondMTU, IDMTUMismatch, []string{"eth0", "eth1"}},
		{"speed", speed, IDSpeedMismatch, []string{"eth0", "eth1"}},
		{"speed key", speed, IDKeyMismatch, []string{"eth0", "eth1"}},
		{"half duplex", half, IDHalfDuplex, []string{"eth1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := analyzeOne(c.b)
			f := find(fs, c.id)
			if f == nil {
				t.Fatalf("no %s in %v", c.id, ids(fs))
			}
			if !slices.Equal(f.Slaves, c.slaves) {
				t.Errorf("slaves %v, want %v (%s)", f.Slaves, c.slaves, f.Message)
			}
		})
	}
	if fs := analyzeOne(xorBond(slave("eth0", 1000), slave("eth1", 1000))); len(fs) != 0 {
		t.Errorf("healthy xor bond: %v", ids(fs))
	}
}

// TestCountersRising: overruns and errors counted during the window
// (seed 004: overruns on a saturated slave), and a link that failed.
func TestCountersRising(t *testing.T) {
	b0 := xorBond(slave("eth0", 1000), slave("eth1", 1000))
	b1 := xorBond(slave("eth0", 1000), slave("eth1", 1000))
	b1.Slaves = slices.Clone(b1.Slaves)
	b1.Slaves[0].Interval = &model.ErrorCounts{RxFifoErrors: new(uint64(12)), RxErrors: new(uint64(0))}
	b1.Slaves[1].Interval = &model.ErrorCounts{RxErrors: new(uint64(3))}
	b1.Slaves[1].LinkFailureCount = new(2)
	fs := analyzeOne(b0, b1)
	for id, want := range map[string][]string{IDOverruns: {"eth0"}, IDErrors: {"eth1"}, IDLinkFlapping: {"eth1"}} {
		f := find(fs, id)
		if f == nil || !slices.Equal(f.Slaves, want) {
			t.Errorf("%s: %+v, want slaves %v", id, f, want)
		}
	}
}

func TestLACPFindings(t *testing.T) {
	base := func() model.BondSample {
		return lacpBond(lacpSlave("eth0", 1), lacpSlave("eth1", 2), lacpSlave("eth2", 3))
	}
	otherSwitch := base()
	otherSwitch.Slaves[2].Partner.SystemMAC = new("00:1c:73:bb:00:02")
	otherSwitch.Slaves[2].AggregatorID = new(2)
	otherSwitch.LACP.NumPorts = new(2)

	slowThere := base()
	st := *slowThere.Slaves[1].Partner.PortState &^ bonding.StateShortTimeout
	slowThere.Slaves[1].Partner.PortState = &st

	expired := base()
	es := *expired.Slaves[0].Actor.PortState | bonding.StateExpired
	expired.Slaves[0].Actor.PortState = &es

	partnerKey := base()
	partnerKey.Slaves[1].Partner.Key = new(2)

	numPorts := base()
	numPorts.Slaves = slices.Clone(numPorts.Slaves)
	for i := range numPorts.Slaves {
		numPorts.Slaves[i].AggregatorID = nil // a reader without the ids
	}
	numPorts.LACP.NumPorts = new(2)

	minLinks := base()
	minLinks.LACP.MinLinks = new(3)

	for _, c := range []struct {
		name   string
		b      model.BondSample
		id     string
		sev    model.Severity
		slaves []string
	}{
		{"other switch", otherSwitch, IDPartnerDiffers, Warning, []string{"eth0", "eth1", "eth2"}},
		{"other aggregator", otherSwitch, IDAggregator, Warning, []string{"eth2"}},
		{"timeout", slowThere, IDTimeoutMismatch, Info, []string{"eth1"}},
		{"expired", expired, IDExpired, Warning, []string{"eth0"}},
		{"partner key", partnerKey, IDKeyMismatch, Warning, []string{"eth0", "eth1", "eth2"}},
		{"num ports", numPorts, IDNumPorts, Warning, []string{}},
		{"min links", minLinks, IDMinLinks, Warning, []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := analyzeOne(c.b)
			f := find(fs, c.id)
			if f == nil {
				t.Fatalf("no %s in %v", c.id, ids(fs))
			}
			if f.Severity != c.sev || !slices.Equal(f.Slaves, c.slaves) {
				t.Errorf("%s %v, want %s %v (%s)", f.Severity, f.Slaves, c.sev, c.slaves, f.Message)
			}
		})
	}
	if fs := analyzeOne(base()); len(fs) != 0 {
		t.Errorf("healthy 802.3ad bond: %v", ids(fs))
	}
	// Churn counted during the window.
	b0, b1 := base(), base()
	b1.Slaves = slices.Clone(b1.Slaves)
	b1.Slaves[1].PartnerChurnedCount = new(1)
	if f := find(analyzeOne(b0, b1), IDChurned); f == nil || !slices.Equal(f.Slaves, []string{"eth1"}) {
		t.Errorf("churn: %+v", f)
	}
}

func TestImbalance(t *testing.T) {
	b := xorBond(slave("eth0", 1000), slave("eth1", 1000))
	for _, c := range []struct {
		tx       [2]float64
		id       bool
		sev      model.Severity
		scoreMin float64
	}{
		{[2]float64{930e6, 70e6}, true, Critical, 0.85}, // seed 000: one link full, one idle
		{[2]float64{400e6, 60e6}, true, Warning, 0.7},
		{[2]float64{520e6, 480e6}, false, "", 0},
		{[2]float64{900e3, 0}, false, "", 0}, // a trickle
	} {
		fs := analyzeOne(withTx(b, 0, 0), withTx(b, c.tx[0], c.tx[1]), withTx(b, c.tx[0], c.tx[1]))
		f := find(fs, IDImbalanceTx)
		if (f != nil) != c.id {
			t.Errorf("%v: finding %+v, want one: %v", c.tx, f, c.id)
			continue
		}
		if f != nil && (f.Severity != c.sev || f.Slaves[0] != "eth0") {
			t.Errorf("%v: %+v", c.tx, f)
		}
	}
	bw := newBondWindow()
	one := withTx(b, 930e6, 70e6)
	bw.add(&one, 1, t0)
	s := bw.shares(&one, true)
	if math.Abs(s.Score-0.86) > 1e-9 || s.Largest != 0 || math.Abs(s.Share(0)-0.93) > 1e-9 {
		t.Errorf("shares %+v", s)
	}
}

func TestExpectedLargestShare(t *testing.T) {
	for _, c := range []struct {
		n, m int
		want float64
	}{
		{1, 2, 1}, {2, 2, 0.75}, {3, 2, 0.75}, {4, 2, 11.0 / 16}, {2, 4, 0.625}, {5, 1, 1},
	} {
		if got := ExpectedLargestShare(c.n, c.m); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("E(%d,%d) = %v, want %v", c.n, c.m, got, c.want)
		}
	}
	// Many flows approach an even split.
	if got := ExpectedLargestShare(200, 2); got > 0.55 {
		t.Errorf("E(200,2) = %v", got)
	}
}

// flowSample builds a bond with a flow table of the given flows (one peer
// MAC, consecutive ports), rates set.
func flowSample(policy string, n int, rate float64, slaves ...string) model.BondSample {
	var ss []model.SlaveSample
	for _, s := range slaves {
		ss = append(ss, slave(s, 1000))
	}
	b := xorBond(ss...)
	b.XmitHashPolicy = new(policy)
	tab := &model.FlowTable{Bond: "bond0", Time: t0, Seconds: 3, Kernel: bonding.KernelVersion{Major: 6, Minor: 12}}
	bond := BondOf(&b)
	pred, _ := bonding.NewPredictor(bond, tab.Kernel)
	for i := range n {
		f := model.Flow{Socket: model.Socket{ID: uint64(i + 1), Proto: bonding.ProtoTCP, State: "established",
			Local:  netip.AddrPortFrom(netip.MustParseAddr("10.0.0.1"), uint16(40000+i)),
			Remote: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i), 9}), 443),
			Path:   model.Path{Dev: "bond0", Bond: "bond0", SrcMAC: [6]byte{2, 0, 0, 0, 0, 1}, DstMAC: [6]byte{2, 0, 0, 0, 0, 0xfe}, HaveDstMAC: true}},
			HaveRate: true, TxBps: rate}
		p := f.Packet()
		f.Choice, _ = pred.Predict(&p)
		tab.Flows = append(tab.Flows, f)
	}
	b.Flows = tab
	return b
}

func TestFlowFindings(t *testing.T) {
	// 12 flows to one gateway over 2 slaves under layer2: one peer.
	b := flowSample("layer2", 12, 50e6, "eth0", "eth1")
	fs := analyzeOne(b)
	if f := find(fs, IDHashPolicy); f == nil || len(f.Slaves) != 1 {
		t.Errorf("one peer: %+v in %v", f, ids(fs))
	}
	if f := find(fs, IDWhatIf); f == nil || f.Severity != Warning {
		t.Errorf("what-if: %+v", f)
	} else {
		t.Log(f.Message)
	}
	// The same flows under layer3+4: no one-peer finding.
	if f := find(analyzeOne(flowSample("layer3+4", 12, 50e6, "eth0", "eth1")), IDHashPolicy); f != nil {
		t.Errorf("layer3+4: %+v", f)
	}
	// One busy flow over 4 slaves, at 90% of a slave: the ceiling.
	one := flowSample("layer3+4", 1, 900e6, "eth0", "eth1", "eth2", "eth3")
	f := find(analyzeOne(one), IDFewFlows)
	if f == nil || f.Severity != Warning || len(f.Slaves) != 1 {
		t.Fatalf("one flow: %+v", f)
	}
	t.Log(f.Message)
	// Three flows over two slaves: information.
	if f := find(analyzeOne(flowSample("layer3+4", 3, 1e6, "eth0", "eth1")), IDFewFlows); f == nil || f.Severity != Info {
		t.Errorf("3 flows: %+v", f)
	}
	// Forty flows: no finding.
	if f := find(analyzeOne(flowSample("layer3+4", 40, 1e6, "eth0", "eth1")), IDFewFlows); f != nil {
		t.Errorf("40 flows: %+v", f)
	}
}

// TestWhatIfMatchesPredictor: every scenario's shares are what the
// kernel's hash gives each flow under that policy and slave set.
func TestWhatIfMatchesPredictor(t *testing.T) {
	b := flowSample("layer2", 64, 1e6, "eth0", "eth1", "eth2")
	wt := WhatIf(&b)
	if wt == nil || len(wt.Policies) != len(bonding.HashPolicies) || !wt.Policies[bonding.PolicyLayer2].Current || wt.Weighting != "tx rate" {
		t.Fatalf("what-if: %+v", wt)
	}
	check := func(s *Scenario) {
		t.Helper()
		counts := make([]float64, len(s.Slaves))
		pred := &bonding.Predictor{Mode: bonding.ModeXOR, Policy: s.Policy, Kernel: b.Flows.Kernel, Usable: s.Slaves}
		placed := 0.0
		for i := range b.Flows.Flows {
			p := b.Flows.Flows[i].Packet()
			c, err := pred.Predict(&p)
			if err != nil || c.Outcome != bonding.Hashed {
				continue
			}
			counts[c.Index]++
			placed++
		}
		for i := range counts {
			want := 0.0
			if placed > 0 {
				want = counts[i] / placed
			}
			if math.Abs(s.Shares[i]-want) > 1e-9 {
				t.Errorf("%s over %v: shares %v", s.Policy, s.Slaves, s.Shares)
				return
			}
		}
	}
	for i := range wt.Policies {
		check(&wt.Policies[i])
	}
	for i := range wt.Counts {
		check(&wt.Counts[i])
	}
	if got := len(wt.Counts); got != 3 { // 2, 4 and 5 slaves
		t.Errorf("%d slave-count scenarios", got)
	}
	if wt.Policies[bonding.PolicyEncap34].Split() != "unpredictable" || wt.Policies[bonding.PolicyLayer2].Split() != "0/0/100" && wt.Policies[bonding.PolicyLayer2].Largest != 1 {
		t.Errorf("encap3+4 %s, layer2 %s", wt.Policies[bonding.PolicyEncap34].Split(), wt.Policies[bonding.PolicyLayer2].Split())
	}
}
