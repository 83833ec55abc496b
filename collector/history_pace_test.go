package collector

import (
	"testing"
	"time"
)

// After a faster pace the history still holds the span it keeps, its
// points in time order across the ring's growth.
func TestHistoryKeepsSpanAfterFasterPace(t *testing.T) {
	tr := fourSlaveTree(t)
	src, err := NewRootSource(tr.dir)
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := NewSampler(src, Options{Interval: time.Second, History: time.Minute, Clock: clk.Now})
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
	pts := s.History().Since(Series{Bond: "bond0", Tx: true}, clk.now.Add(-time.Hour))
	if len(pts) < 2 {
		t.Fatalf("%d points", len(pts))
	}
	for i := 1; i < len(pts); i++ {
		if !pts[i].Time.After(pts[i-1].Time) {
			t.Fatalf("point %d at %v follows %v", i, pts[i].Time, pts[i-1].Time)
		}
	}
	if span := clk.now.Sub(pts[0].Time); span < 59*time.Second {
		t.Fatalf("history spans %v after the faster pace, want the minute it keeps", span)
	}
	tick(1200, 100*time.Millisecond)
	pts = s.History().Since(Series{Bond: "bond0", Tx: true}, clk.now.Add(-time.Hour))
	if span := clk.now.Sub(pts[0].Time); span < 59*time.Second || span > 61*time.Second {
		t.Fatalf("history spans %v at 100 ms, want a minute", span)
	}
	if c := s.History().Capacity(); c != 600 {
		t.Fatalf("capacity %d, want 600 (a minute at 100 ms)", c)
	}
}

// A Sampler told to keep no history records none.
func TestNoHistory(t *testing.T) {
	tr := fourSlaveTree(t)
	src, err := NewRootSource(tr.dir)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSampler(src, Options{History: NoHistory})
	if _, err := s.Sample(); err != nil {
		t.Fatal(err)
	}
	if s.History() != nil {
		t.Fatal("a history was kept")
	}
}
