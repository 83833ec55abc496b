package diagnose

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/model"
)

var k612 = bonding.KernelVersion{Major: 6, Minor: 12}

// meteredFlow is a TCP flow as the meter counts it, with its rate; tx
// flows get the slave the bond's hash predicts (bonding's own Predictor,
// the judge) unless on is given.
func meteredFlow(b *model.BondSample, dir flowmeter.Direction, srcMAC, dstMAC [6]byte, src, dst string, sport uint16, bps float64, on string) model.MeasuredFlow {
	f := model.MeasuredFlow{Flow: &flowmeter.Flow{}, HaveRate: true, Bps: bps}
	f.Direction, f.EtherType, f.Proto = dir, 0x0800, bonding.ProtoTCP
	f.Src, f.Dst = netip.MustParseAddr(src), netip.MustParseAddr(dst)
	f.SrcPort, f.DstPort = sport, 443
	f.SrcMAC, f.DstMAC = srcMAC, dstMAC
	f.Slave = on
	if dir == flowmeter.Tx {
		pred, _ := bonding.NewPredictor(BondOf(b), k612)
		p := f.Packet()
		f.Predicted, _ = pred.Predict(&p)
		if on == "" {
			f.Slave = f.Predicted.Slave
		}
	}
	return f
}

// withMeasured sets b's traffic to flows and its agreement as the
// collector counts it.
func withMeasured(b model.BondSample, flows ...model.MeasuredFlow) model.BondSample {
	m := &model.MeasuredTraffic{Source: "ebpf", SampleRate: 1, Seconds: 1, Kernel: k612, Flows: flows}
	agree, all := 0.0, 0.0
	for _, f := range flows {
		if !f.IsTx() {
			continue
		}
		m.Agreement.Flows++
		all += f.Bps
		if !f.Disagrees() {
			m.Agreement.Agree++
			agree += f.Bps
		}
	}
	if all > 0 {
		m.Agreement.BytesAgreeShare = new(agree / all)
	}
	b.Measured = m
	return b
}

var (
	bondMAC = [6]byte{2, 0, 0, 0, 0, 1}
	gwMAC   = [6]byte{2, 0, 0, 0, 0, 0xfe}
)

func TestHashCheck(t *testing.T) {
	b := lacpBond(lacpSlave("eth0", 1), lacpSlave("eth1", 2))
	b.XmitHashPolicy = new("layer3+4")
	var flows []model.MeasuredFlow
	for i := range 8 {
		flows = append(flows, meteredFlow(&b, flowmeter.Tx, bondMAC, gwMAC, "10.0.0.1", "10.9.0.1", uint16(40000+i), 10e6, ""))
	}
	if f := find(analyzeOne(withMeasured(b, flows...)), IDHashCheck); f != nil {
		t.Fatalf("every flow on its predicted slave, yet %+v", f)
	}
	// One flow leaves on the other slave: a finding naming it.
	wrong := flows[3]
	wrong.Slave = map[string]string{"eth0": "eth1", "eth1": "eth0"}[wrong.Slave]
	flows[3] = wrong
	fs := analyzeOne(withMeasured(b, flows...))
	f := find(fs, IDHashCheck)
	if f == nil || f.Severity != Warning || len(f.Slaves) != 1 || f.Slaves[0] != wrong.Slave {
		t.Fatalf("hash check: %+v in %v", f, ids(fs))
	}
	if want := "10.0.0.1:40003 -> 10.9.0.1:443 on " + wrong.Slave; !strings.Contains(f.Detail, want) {
		t.Fatalf("the finding does not name the flow (%q): %s", want, f.Detail)
	}
	t.Log(f.Message)
	// Right after a failover the flows moved: no finding.
	prev := withMeasured(lacpBond(lacpSlave("eth0", 1), lacpSlave("eth1", 2), lacpSlave("eth2", 3)), flows...)
	if f := find(analyzeOne(prev, withMeasured(b, flows...)), IDHashCheck); f != nil {
		t.Fatalf("after the usable slaves changed: %+v", f)
	}
}

func TestSwitchHash(t *testing.T) {
	b := lacpBond(lacpSlave("eth0", 1), lacpSlave("eth1", 2))
	b.XmitHashPolicy = new("layer3+4")
	vm := func(i int) [6]byte { return [6]byte{0x52, 0x54, 0, 0, 0, byte(i)} }
	var flows []model.MeasuredFlow
	// The gateway sends to four VMs: all on eth1.
	for i := range 4 {
		flows = append(flows, meteredFlow(&b, flowmeter.Rx, gwMAC, vm(i), "10.9.0.1", "10.0.1.1", uint16(443), 500e6, "eth1"))
		flows[len(flows)-1].DstPort = uint16(50000 + i)
	}
	// A little from a peer on eth0.
	flows = append(flows, meteredFlow(&b, flowmeter.Rx, [6]byte{2, 0, 0, 0, 0, 0x33}, bondMAC, "10.0.0.33", "10.0.0.1", 2049, 50e6, "eth0"))
	fs := analyzeOne(withMeasured(b, flows...))
	f := find(fs, IDSwitchHash)
	if f == nil || len(f.Slaves) != 1 || f.Slaves[0] != "eth1" || !strings.Contains(f.Message, "source MAC alone") || !strings.Contains(f.Message, "02:00:00:00:00:fe") {
		t.Fatalf("switch hash: %+v in %v", f, ids(fs))
	}
	t.Log(f.Message)

	// Multicast from the gateway elsewhere, and a trickle: still the
	// finding.
	mc := meteredFlow(&b, flowmeter.Rx, gwMAC, [6]byte{0x33, 0x33, 0, 0, 0, 1}, "10.9.0.1", "10.0.1.1", 5353, 100e6, "eth0")
	trickle := meteredFlow(&b, flowmeter.Rx, gwMAC, bondMAC, "10.9.0.1", "10.0.0.1", 53, 1e3, "eth0")
	if f := find(analyzeOne(withMeasured(b, append(slices.Clone(flows), mc, trickle)...)), IDSwitchHash); f == nil {
		t.Fatal("multicast and a trickle elsewhere hide the finding")
	}
	// The same source spread over both slaves: the switch hashes more
	// than the MAC, no finding.
	flows[0].Slave = "eth0"
	if f := find(analyzeOne(withMeasured(b, flows...)), IDSwitchHash); f != nil {
		t.Fatalf("spread flows: %+v", f)
	}
	// One VM's flows, same addresses, different ports, all on eth1: the
	// switch hashes addresses, not ports.
	flows = flows[:0]
	for i := range 4 {
		flows = append(flows, meteredFlow(&b, flowmeter.Rx, gwMAC, vm(1), "10.9.0.1", "10.0.1.1", uint16(443), 500e6, "eth1"))
		flows[i].DstPort = uint16(50000 + i)
	}
	if f := find(analyzeOne(withMeasured(b, flows...)), IDSwitchHash); f == nil || !strings.Contains(f.Message, "addresses, not ports") {
		t.Fatalf("ports: %+v", f)
	}
}

// TestWhatIfMeasured: with a meter, the what-if weighs every measured tx
// flow (forwarded ones included) by its rate, not this host's sockets.
func TestWhatIfMeasured(t *testing.T) {
	b := flowSample("layer2", 2, 1e6, "eth0", "eth1")
	var flows []model.MeasuredFlow
	for i := range 16 {
		vm := [6]byte{0x52, 0x54, 0, 0, 0, byte(i)}
		flows = append(flows, meteredFlow(&b, flowmeter.Tx, vm, gwMAC, "10.0.1.1", "10.9.0.1", uint16(40000+i), 100e6, ""))
	}
	wt := WhatIf(ptr(withMeasured(b, flows...)))
	if wt == nil || !wt.Measured || wt.Flows != 16 || wt.Weighting != "measured tx rate" {
		t.Fatalf("what-if %+v", wt)
	}
	// Judge: the bonding package's hash places the 16 flows under layer2.
	want := make([]float64, 2)
	for _, f := range flows {
		p := f.Packet()
		h, err := bonding.Hash(bonding.PolicyLayer2, &p, k612)
		if err != nil {
			t.Fatal(err)
		}
		want[bonding.Pick(h, 2)] += 1.0 / 16
	}
	got := wt.Policies[bonding.PolicyLayer2].Shares
	if got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("layer2 shares %v, want %v", got, want)
	}
}

func ptr[T any](v T) *T { return &v }
