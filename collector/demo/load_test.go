package demo

import (
	"net/netip"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
)

// Test streams injected into the demo are hashed like its own flows: on
// the slave the Predictor names, in the flow table, moving that slave's
// counters; they leave after their duration, or at Stop.
func TestDemoLoad(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	d := New(func() time.Time { return now })
	read := func() collector.Reading {
		t.Helper()
		r, err := d.Read()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := read()
	dst := netip.MustParseAddr("10.20.0.100")
	flow, err := d.LoadFlow("bond0", dst)
	if err != nil {
		t.Fatal(err)
	}
	if flow.DstMAC == ([6]byte{}) || flow.Src != netip.MustParseAddr("10.20.0.11") {
		t.Fatalf("load flow %+v: want the demo's address and a peer MAC", flow)
	}
	if _, err := d.LoadFlow("bond0", netip.MustParseAddr("2001:db8::1")); err == nil {
		t.Error("an IPv6 peer: no error")
	}
	if _, err := d.LoadFlow("bond7", dst); err == nil {
		t.Error("an unknown bond: no error")
	}

	l, err := d.StartLoad(LoadSpec{Bond: "bond0", Dst: dst, DstPort: 5201, SrcPorts: []uint16{40100, 40101},
		TxBps: 1e9, RxBps: 1e7, Duration: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// layer2 (the demo's policy): both streams take the peer's slave.
	flow.Proto, flow.DstPort, flow.SrcPort = bonding.ProtoTCP, 5201, 40100
	real, _ := bonding.NewPredictor(r.Bond("bond0"), d.kernel)
	c, err := real.Predict(&flow)
	if err != nil || c.Slave == "" {
		t.Fatalf("predict: %v %+v", err, c)
	}
	before := r.Bond("bond0")
	txBefore := map[string]uint64{}
	for _, s := range before.Slaves {
		txBefore[s.Name], _ = s.Counters.Get(bonding.TxBytes)
	}
	now = now.Add(2 * time.Second)
	r = read()
	bytes, at := l.Bytes()
	// The peer's slave is busy with the demo's own flows: the streams get
	// their share of its 10G, not all of their 1G each.
	if at != 2*time.Second || bytes[0].Sent < 1e8 || bytes[1].Sent < 1e8 || bytes[0].Sent > 2.5e8 {
		t.Fatalf("after 2 s at up to 1 Gbit/s: %+v at %v", bytes, at)
	}
	fr, _ := d.ReadFlows()
	found := 0
	for _, s := range fr.Sockets {
		if s.Remote == netip.AddrPortFrom(dst, 5201) {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("flow table has %d test streams, want 2", found)
	}
	for _, s := range r.Bond("bond0").Slaves {
		tx, _ := s.Counters.Get(bonding.TxBytes)
		if s.Name == c.Slave && tx-txBefore[s.Name] < bytes[0].Sent+bytes[1].Sent {
			t.Errorf("%s (the predicted slave) moved %d bytes, less than the streams' %d", s.Name, tx-txBefore[s.Name], bytes[0].Sent+bytes[1].Sent)
		}
	}
	select {
	case <-l.Done():
		t.Fatal("done before its duration")
	default:
	}
	now = now.Add(4 * time.Second)
	read()
	select {
	case <-l.Done():
	default:
		t.Fatal("not done after its duration")
	}
	fr, _ = d.ReadFlows()
	for _, s := range fr.Sockets {
		if s.Remote.Port() == 5201 {
			t.Fatal("a finished test stream is still in the flow table")
		}
	}
	// Stop ends a test at the next Read.
	l2, err := d.StartLoad(LoadSpec{Bond: "bond1", Dst: netip.MustParseAddr("192.168.10.50"), DstPort: 5201,
		SrcPorts: []uint16{41000}, TxBps: 1e8, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	l2.Stop()
	now = now.Add(time.Second)
	read()
	<-l2.Done()
}
