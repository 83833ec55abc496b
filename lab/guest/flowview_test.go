//go:build linux

package guest

import (
	"encoding/json"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/model"
)

// TestFlowView: bondtop's collector over the real flow meter, as
// cmd/bondtop wires it (live source, socket table, meter, analyzer), on a
// balance-xor layer3+4 bond whose host routes a "VM" and runs TCP streams
// of its own. While the streams run, every tx flow must be on its
// predicted slave (the hash check all agreeing, no finding), the host's
// streams marked local, the VM's marked forwarded. Then, over a window
// that starts and ends quiet (the live source stamps its counters after
// its whole read, tens of milliseconds in the emulated VM, during which
// busy links move bytes one side counts and the other not), each slave's
// summed flow rates must be within 5% of its counters', both directions.
func TestFlowView(t *testing.T) {
	const streams, firstPort = 4, 45000
	l := newMeterLab(t, 140, 3, BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer3+4"}, true)
	p := l.p
	sample := meteredSampler(t, p.Bond)
	sample()

	tr := StartTCP(t, p.Peer, p.Local, p.Remote, streams, firstPort)
	time.Sleep(time.Second) // past slow start
	sample()
	udp(t, l.vm, l.vmIP, l.peerIP, 24, 20, 600, 30000)
	time.Sleep(time.Second)
	b := sample()
	mt := b.Measured
	if mt == nil || mt.Source != "ebpf" || !mt.HaveRates() {
		t.Fatalf("traffic %+v, want ebpf with rates", mt)
	}
	a := mt.Agreement
	share := -1.0
	if a.BytesAgreeShare != nil {
		share = *a.BytesAgreeShare
	}
	t.Logf("%d flows, hash check %d of %d (%d unpredictable), bytes share %.4f", len(mt.Flows), a.Agree, a.Flows, a.Unpredictable, share)
	if a.Flows == 0 || a.Disagree() != 0 || a.BytesAgreeShare == nil || *a.BytesAgreeShare < 0.999 {
		for _, f := range mt.Flows {
			if f.Disagrees() {
				t.Errorf("%s %v:%d -> %v:%d on %s, predicted %s", f.ProtoName(), f.Src, f.SrcPort, f.Dst, f.DstPort, f.Slave, f.PredictedSlave())
			}
		}
		t.Errorf("hash check %+v", a)
	}
	for _, f := range b.Findings {
		if f.ID == diagnose.IDHashCheck {
			t.Errorf("finding %s: %s", f.ID, f.Message)
		}
	}
	checkMarks(t, l, mt, streams, firstPort)
	out, err := json.Marshal(b)
	if err != nil || !strings.Contains(string(out), `"traffic":{"source":"ebpf","sample_rate":1,"flows":[{`) {
		t.Errorf("JSON: %v, %.300s", err, out)
	}

	// The sums, over a window with quiet edges.
	if _, err := tr.Stop(); err != nil {
		t.Logf("streams ended: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	sample()
	udp(t, l.vm, l.vmIP, l.peerIP, 24, 40, 600, 30100)
	udp(t, p.Peer, l.peerIP, l.vmIP, 24, 40, 600, 31100)
	tcp(t, l.vm, p.Peer, l.vmIP, l.peerIP, 6, 512<<10, 32000)
	time.Sleep(500 * time.Millisecond)
	b = sample()
	mt = b.Measured
	worst := 0.0
	for _, sl := range b.Slaves {
		ms := mt.Slave(sl.Name)
		if ms == nil || sl.TxBps == nil || sl.RxBps == nil {
			t.Fatalf("%s: no measured sums or counter rates", sl.Name)
		}
		for _, d := range []struct {
			dir               string
			counted, measured float64
		}{{"tx", *sl.TxBps, ms.TxBps + ms.LostTxBps}, {"rx", *sl.RxBps, ms.RxBps + ms.LostRxBps}} {
			diff := math.Abs(d.counted - d.measured)
			t.Logf("%s %s: flows %.0f bit/s, counters %.0f", sl.Name, d.dir, d.measured, d.counted)
			if d.counted > 1e6 {
				worst = max(worst, diff/d.counted)
			}
			// Slack for what crosses a quiet link anyway (ARP, IPv6
			// neighbour discovery): a few frames a second.
			if diff > 0.05*d.counted+50e3 {
				t.Errorf("%s %s: the flows sum to %.0f bit/s, the counters %.0f", sl.Name, d.dir, d.measured, d.counted)
			}
		}
	}
	Measure(t, "flowview_slave_sum_error", 100*worst, "%")
}

// checkMarks: the host's streams (source ports firstPort...) are local,
// with their rx side; the VM's datagrams forwarded; each stream's tx flow
// on the slave bonding's predictor gives.
func checkMarks(t *testing.T, l *meterLab, mt *model.MeasuredTraffic, streams, firstPort int) {
	t.Helper()
	pred, err := bonding.NewPredictor(bondWhenUsable(t, l.p.Bond, len(l.p.Slaves)), l.k)
	if err != nil {
		t.Fatal(err)
	}
	local := netip.MustParseAddr(l.p.Local.String())
	vm := netip.MustParseAddr(l.vmIP.String())
	seen := map[string]int{}
	for i := range mt.Flows {
		f := &mt.Flows[i]
		switch {
		case f.IsTx() && f.Src == local && int(f.SrcPort) >= firstPort && int(f.SrcPort) < firstPort+streams:
			seen["local tx"]++
			if !f.Local || f.Forwarded {
				t.Errorf("stream from port %d: local %v, forwarded %v", f.SrcPort, f.Local, f.Forwarded)
			}
			pk := f.Packet()
			want, err := pred.Predict(&pk)
			if err != nil || want.Slave != f.Slave {
				t.Errorf("stream from port %d on %s, bonding's predictor says %s (%v)", f.SrcPort, f.Slave, want.Slave, err)
			}
		case !f.IsTx() && f.Dst == local && int(f.DstPort) >= firstPort && int(f.DstPort) < firstPort+streams:
			seen["local rx"]++
			if !f.Local {
				t.Errorf("acks of the stream to port %d not marked local", f.DstPort)
			}
		case f.IsTx() && f.Src == vm && f.Proto == bonding.ProtoUDP:
			seen["vm tx"]++
			if f.Local || !f.Forwarded {
				t.Errorf("the VM's flow from port %d: local %v, forwarded %v", f.SrcPort, f.Local, f.Forwarded)
			}
		}
	}
	if seen["local tx"] != streams || seen["local rx"] == 0 || seen["vm tx"] == 0 {
		t.Errorf("flows seen: %v, want %d local tx, local rx and the VM's tx", seen, streams)
	}
}

// meteredSampler is bondtop's collector as cmd/bondtop wires it on a live
// host: the live source, the socket table, the flow meter and the
// analyzer. It returns a function taking one sample of bond.
func meteredSampler(t *testing.T, bond string) func() *model.BondSample {
	t.Helper()
	m, err := flowmeter.Open(flowmeter.Options{})
	if err != nil {
		t.Fatalf("flowmeter.Open: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	src, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	lf, err := live.NewFlows()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lf.Close() })
	s := collector.NewSampler(src, collector.Options{Interval: time.Second, Bonds: []string{bond}, History: time.Minute,
		Flows: lf, FlowInterval: 100 * time.Millisecond, Meter: m, Analyze: diagnose.NewWindow(0).Fill})
	return func() *model.BondSample {
		snap, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		return BondIn(t, snap, bond)
	}
}

// TestFlowViewSwitchHash: the partner bond hashes by layer2, so every
// datagram it sends this host (one MAC pair, many ports) arrives on one
// slave; the receive-side finding must name that slave and say the
// partner does not hash ports.
func TestFlowViewSwitchHash(t *testing.T) {
	l := newMeterLab(t, 141, 3, BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer2"}, true)
	sample := meteredSampler(t, l.p.Bond)
	sample()
	udp(t, l.p.Peer, l.peerIP, l.vmIP, 24, 100, 600, 33000)
	time.Sleep(time.Second)
	b := sample()
	var on map[string]bool = map[string]bool{}
	for _, f := range b.Measured.Flows {
		if !f.IsTx() && f.Proto == bonding.ProtoUDP && f.Src.String() == l.peerIP.String() && f.Bps > 0 {
			on[f.Slave] = true
		}
	}
	if len(on) != 1 {
		t.Fatalf("the partner's datagrams arrive on %v, want one slave (layer2, one MAC pair)", on)
	}
	var f *model.Finding
	for i := range b.Findings {
		if b.Findings[i].ID == diagnose.IDSwitchHash {
			f = &b.Findings[i]
		}
	}
	if f == nil {
		t.Fatalf("no %s finding; findings: %+v", diagnose.IDSwitchHash, b.Findings)
	}
	t.Logf("%s: %s", f.ID, f.Message)
	if len(f.Slaves) != 1 || !on[f.Slaves[0]] || !strings.Contains(f.Message, "not ports") {
		t.Errorf("finding %+v, want the slave of %v and a hash without ports", f, on)
	}
}
