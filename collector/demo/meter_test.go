package demo

import (
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/model"
)

// TestDemoMeter: the demo's simulated meter shows VM traffic no socket of
// the host holds, all flows from the gateway's MAC arriving on one slave,
// and tx flows on the slave the kernel's hash predicts.
func TestDemoMeter(t *testing.T) {
	clk := collectortest.NewClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	s := collector.NewSampler(New(clk.Now), collector.Options{Interval: time.Second, Clock: clk.Now})
	var mt *model.MeasuredTraffic
	for range 5 {
		mt = collectortest.MustSample(t, s).Bond("bond0").Measured
		clk.Advance(time.Second)
	}
	if !mt.Metered() || !mt.HaveRates() {
		t.Fatalf("demo traffic %+v", mt)
	}
	forwarded, forwardedRx, gatewayRx := 0, 0, map[string]bool{}
	gateway := [6]byte{0x02, 0x00, 0x5e, 0x10, 0xfe, 0x01}
	for i := range mt.Flows {
		f := &mt.Flows[i]
		if f.Local == f.Forwarded {
			t.Fatalf("a demo flow is local or forwarded, not both or neither: %+v", f.Key)
		}
		if f.Forwarded && f.IsTx() {
			forwarded++
		}
		if f.Forwarded && !f.IsTx() {
			forwardedRx++
		}
		if !f.IsTx() && f.SrcMAC == gateway && f.Bps > 0 {
			gatewayRx[f.Slave] = true
		}
	}
	if forwarded < 5 || forwardedRx < 5 {
		t.Fatalf("%d forwarded tx flows and %d rx, want the VMs' (6 each)", forwarded, forwardedRx)
	}
	if len(gatewayRx) != 1 {
		t.Fatalf("the gateway's frames arrive on %v, want one slave (the switch hashes by source MAC)", gatewayRx)
	}
	if a := mt.Agreement; a.Flows == 0 || a.Agree != a.Flows {
		t.Fatalf("demo agreement %+v, want every tx flow on its predicted slave", a)
	}
	// The per-slave sums of the measured flows match each slave's own
	// counters (the same bytes, counted twice by the simulation).
	snap := collectortest.MustSample(t, s)
	bs := snap.Bond("bond0")
	for i := range bs.Slaves {
		sl := &bs.Slaves[i]
		ms := bs.Measured.Slave(sl.Name)
		if sl.TxBps == nil || ms == nil {
			t.Fatalf("%s: no rates", sl.Name)
		}
		if d := *sl.TxBps - ms.TxBps; d < -1e3 || d > 1e3 {
			t.Fatalf("%s: counters %v bit/s tx, flows %v", sl.Name, *sl.TxBps, ms.TxBps)
		}
	}
}
