package collector_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/internal/testtree"
	"github.com/bondtop/bondtop/model"
)

// recordingHistory is a History of a 4-slave bond whose rings are full,
// and a snapshot to record into it.
func recordingHistory(tb testing.TB, interval time.Duration) (*collector.History, *model.Snapshot) {
	h := collector.NewHistory(100*interval, interval)
	snap := &model.Snapshot{Time: time.Unix(1_000_000, 0)}
	tr := testtree.FourSlave(tb)
	src, err := rootdir.New(tr.Dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	clk := collectortest.NewClock(snap.Time)
	s := collector.NewSampler(src, collector.Options{Interval: time.Second, History: collector.NoHistory, Clock: clk.Now})
	if _, err := s.Sample(); err != nil {
		tb.Fatal(err)
	}
	clk.Advance(time.Second)
	snap, err = s.Sample()
	if err != nil {
		tb.Fatal(err)
	}
	for range 3 * 100 * int(time.Second/interval) {
		snap.Time = snap.Time.Add(interval)
		h.Record(snap)
	}
	return h, snap
}

// BenchmarkHistoryRecord records a 4-slave bond's snapshot (ten series)
// into full rings at 100 ms. Its budget is no allocation.
func BenchmarkHistoryRecord(b *testing.B) {
	h, snap := recordingHistory(b, collector.MinInterval)
	tick := func() {
		snap.Time = snap.Time.Add(collector.MinInterval)
		h.Record(snap)
	}
	steady := collectortest.SteadyAllocs(tick)
	b.ReportAllocs()
	for b.Loop() {
		tick()
	}
	collectortest.ReportBudget(b, steady, 0)
}

// BenchmarkHistoryHour64x8 fills an hour's history at 1 s for 64 bonds
// of 8 slaves (1,152 series) and reports the heap it holds: the memory a
// dashboard on such a host keeps for its graphs.
func BenchmarkHistoryHour64x8(b *testing.B) {
	snap := &model.Snapshot{Time: time.Unix(1_700_000_000, 0)}
	rate := 1e9
	for i := range 64 {
		bs := model.BondSample{Bond: bonding.Bond{Name: fmt.Sprintf("bond%d", i)}, Traffic: model.Traffic{RxBps: &rate, TxBps: &rate}}
		for j := range 8 {
			bs.Slaves = append(bs.Slaves, model.SlaveSample{Slave: bonding.Slave{Name: fmt.Sprintf("b%ds%d", i, j)}, Traffic: model.Traffic{RxBps: &rate, TxBps: &rate}})
		}
		snap.Bonds = append(snap.Bonds, bs)
	}
	var held float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h := collector.NewHistory(time.Hour, time.Second)
		for range 3600 {
			snap.Time = snap.Time.Add(time.Second)
			h.Record(snap)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = float64(after.HeapAlloc-before.HeapAlloc) / 1e6
		runtime.KeepAlive(h)
	}
	b.ReportMetric(held, "MB-held")
}
