package collector_test

import (
	"math"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/internal/testtree"
	"github.com/bondtop/bondtop/model"
)

// After a faster pace the history still holds the span it keeps, its
// points in time order across the ring's growth.
func TestHistoryKeepsSpanAfterFasterPace(t *testing.T) {
	tr := testtree.FourSlave(t)
	src, err := rootdir.New(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	clk := collectortest.NewClock(time.Unix(1_700_000_000, 0))
	s := collector.NewSampler(src, collector.Options{Interval: time.Second, History: time.Minute, Clock: clk.Now})
	tick := func(n int, d time.Duration) {
		for range n {
			clk.Advance(d)
			if _, err := s.Sample(); err != nil {
				t.Fatal(err)
			}
		}
	}
	tick(90, time.Second) // full ring, wrapped
	s.SetInterval(100 * time.Millisecond)
	tick(300, 100*time.Millisecond) // 30 s at the new pace
	pts := s.History().Since(collector.Series{Bond: "bond0", Tx: true}, clk.Now().Add(-time.Hour))
	if len(pts) < 2 {
		t.Fatalf("%d points", len(pts))
	}
	for i := 1; i < len(pts); i++ {
		if !pts[i].Time.After(pts[i-1].Time) {
			t.Fatalf("point %d at %v follows %v", i, pts[i].Time, pts[i-1].Time)
		}
	}
	if span := clk.Now().Sub(pts[0].Time); span < 59*time.Second {
		t.Fatalf("history spans %v after the faster pace, want the minute it keeps", span)
	}
	tick(1200, 100*time.Millisecond)
	pts = s.History().Since(collector.Series{Bond: "bond0", Tx: true}, clk.Now().Add(-time.Hour))
	if span := clk.Now().Sub(pts[0].Time); span < 59*time.Second || span > 61*time.Second {
		t.Fatalf("history spans %v at 100 ms, want a minute", span)
	}
	if c := s.History().Capacity(); c != 600 {
		t.Fatalf("capacity %d, want 600 (a minute at 100 ms)", c)
	}
}

// A Sampler told to keep no history records none.
func TestNoHistory(t *testing.T) {
	tr := testtree.FourSlave(t)
	src, err := rootdir.New(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	s := collector.NewSampler(src, collector.Options{History: collector.NoHistory})
	if _, err := s.Sample(); err != nil {
		t.Fatal(err)
	}
	if s.History() != nil {
		t.Fatal("a history was kept")
	}
}

// Below a second, an hour of history is the last minute at the pace and
// one peak a second before it: bounded memory, the whole span, peaks kept.
func TestHistoryHourAtFastPace(t *testing.T) {
	for _, c := range []struct {
		name  string
		start time.Duration // the pace before 100 ms (0: 100 ms from the start)
	}{{"100ms", 0}, {"1s then 100ms", time.Second}} {
		t.Run(c.name, func(t *testing.T) {
			h := collector.NewHistory(time.Hour, max(c.start, 100*time.Millisecond))
			at := time.Unix(1_700_000_000, 0)
			rec := func(v float64) {
				h.Record(&model.Snapshot{Time: at, Bonds: []model.BondSample{{Bond: bonding.Bond{Name: "bond0"}, Traffic: model.Traffic{TxBps: &v}}}})
			}
			if c.start > 0 {
				for range 1800 { // half an hour at 1 s
					at = at.Add(c.start)
					rec(1)
				}
				h.Pace(100 * time.Millisecond)
			}
			spikeAt := at.Add(10 * time.Minute)
			for range 2 * 36000 { // two hours at 100 ms
				at = at.Add(100 * time.Millisecond)
				v := 1.0
				if at.Equal(spikeAt) {
					v = 1e9
				}
				rec(v)
			}
			key := collector.Series{Bond: "bond0", Tx: true}
			pts := h.Since(key, at.Add(-time.Hour))
			if span := at.Sub(pts[0].Time); span < 59*time.Minute || span > time.Hour {
				t.Fatalf("an hour asked for, %v held", span)
			}
			if n := len(pts); n > 600+3600+1 {
				t.Fatalf("%d points for an hour: want the last minute at 100 ms and a peak a second", n)
			}
			for i := 1; i < len(pts); i++ {
				if !pts[i].Time.After(pts[i-1].Time) {
					t.Fatalf("point %d at %v after %v", i, pts[i].Time, pts[i-1].Time)
				}
			}
			// The last minute is at the pace.
			if recent := h.Since(key, at.Add(-time.Minute)); len(recent) < 590 {
				t.Fatalf("%d points in the last minute at 100 ms", len(recent))
			}
		})
	}
}

// A spike of one 100 ms sample survives as its second's peak.
func TestHistoryKeepsPeaks(t *testing.T) {
	h := collector.NewHistory(time.Hour, 100*time.Millisecond)
	at := time.Unix(1_700_000_000, 0)
	spike := at.Add(5*time.Second + 300*time.Millisecond)
	for range 20 * 60 * 10 { // 20 minutes
		at = at.Add(100 * time.Millisecond)
		v := 1.0
		if at.Equal(spike) {
			v = 5e9
		}
		h.Record(&model.Snapshot{Time: at, Bonds: []model.BondSample{{Bond: bonding.Bond{Name: "bond0"}, Traffic: model.Traffic{TxBps: &v}}}})
	}
	found := false
	for _, p := range h.Since(collector.Series{Bond: "bond0", Tx: true}, time.Time{}) {
		if p.Value == 5e9 {
			found = true
		}
	}
	if !found {
		t.Fatal("the spike of one sample 20 minutes ago is gone from the per-second history")
	}
}

// A bond's series share its clock: a slave that appears later has gaps
// (NaN) for the samples before it, one that leaves gets gaps while it is
// away rather than the old values of the slots its clock reuses, and the
// others are untouched, every series on the same times.
func TestHistorySlaveComesAndGoes(t *testing.T) {
	h := collector.NewHistory(10*time.Second, time.Second)
	at := time.Unix(1_700_000_000, 0)
	present := func(i int) bool { return i >= 2 && (i < 12 || i >= 16) }
	record := func(i int) {
		at = at.Add(time.Second)
		v, w := float64(i), float64(100+i)
		b := model.BondSample{Bond: bonding.Bond{Name: "bond0"}, Traffic: model.Traffic{TxBps: &v}}
		b.Slaves = append(b.Slaves, model.SlaveSample{Slave: bonding.Slave{Name: "e1"}, Traffic: model.Traffic{TxBps: &v}})
		if present(i) {
			b.Slaves = append(b.Slaves, model.SlaveSample{Slave: bonding.Slave{Name: "e2"}, Traffic: model.Traffic{TxBps: &w}})
		}
		h.Record(&model.Snapshot{Time: at, Bonds: []model.BondSample{b}})
	}
	check := func(from, to int) {
		t.Helper()
		e1 := h.Since(collector.Series{Bond: "bond0", Slave: "e1", Tx: true}, time.Time{})
		e2 := h.Since(collector.Series{Bond: "bond0", Slave: "e2", Tx: true}, time.Time{})
		if len(e1) != to-from || len(e2) != to-from {
			t.Fatalf("%d and %d points, want samples %d to %d", len(e1), len(e2), from, to-1)
		}
		for j := range e1 {
			i := from + j
			if e1[j].Value != float32(i) {
				t.Errorf("e1 sample %d: %v, want %d", i, e1[j].Value, i)
			}
			if !e2[j].Time.Equal(e1[j].Time) {
				t.Errorf("sample %d: e2 at %v, e1 at %v", i, e2[j].Time, e1[j].Time)
			}
			got := e2[j].Value
			switch {
			case present(i) && got != float32(100+i):
				t.Errorf("e2 sample %d: %v, want %d", i, got, 100+i)
			case !present(i) && !math.IsNaN(float64(got)):
				t.Errorf("e2 sample %d, when it was not there: %v, want a gap", i, got)
			}
		}
	}
	for i := range 6 {
		record(i)
	}
	check(0, 6)
	for i := 6; i < 20; i++ { // the ring of 10 wraps; e2 is away for 12-15
		record(i)
	}
	check(10, 20)
	if pts := h.Since(collector.Series{Bond: "bond0", Slave: "e3"}, time.Time{}); pts != nil {
		t.Errorf("a series never seen: %v", pts)
	}
}
