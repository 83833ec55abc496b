package collector_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/model"
)

// TestRecycledSnapshotsAcrossGoroutines runs a recycling Sampler over the
// demo as the dashboard uses it: Run hands each snapshot to a consumer on
// another goroutine, which reads all of it, then hands it back. Under
// -race, a tick that filled a snapshot the consumer still read would be
// reported.
func TestRecycledSnapshotsAcrossGoroutines(t *testing.T) {
	s := collector.NewSampler(demo.New(time.Now), collector.Options{Interval: collector.MinInterval, Recycle: true, History: collector.NoHistory})
	if _, err := s.Sample(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps := make(chan *model.Snapshot, 4)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, func(snap *model.Snapshot) { snaps <- snap }) }()
	seen := map[*model.Snapshot]int{}
	for range 15 {
		snap := <-snaps
		if _, err := json.Marshal(snap); err != nil {
			t.Fatal(err)
		}
		seen[snap]++
		s.Release(snap)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(seen) > collector.LentSnapshots {
		t.Errorf("15 snapshots handed back as they came were %d different ones, want them filled again", len(seen))
	}
}

// TestRecycledSnapshotsReadAsNew: snapshots filled again say exactly
// what new ones say. Two Samplers over the same demo clock (neighbours
// heard, LACPDU and carrier counters, flows, the meter), one recycling and
// handing back each snapshot at the next tick: every tick's JSON is the
// same.
func TestRecycledSnapshotsReadAsNew(t *testing.T) {
	clk := collectortest.NewClock(time.Unix(1_000_000, 0))
	fresh := collector.NewSampler(demo.New(clk.Now), collector.Options{Interval: collector.MinInterval, Clock: clk.Now})
	again := collector.NewSampler(demo.New(clk.Now), collector.Options{Interval: collector.MinInterval, Clock: clk.Now, Recycle: true})
	var last *model.Snapshot
	for i := range 40 {
		clk.Advance(collector.MinInterval)
		want, err := fresh.Sample()
		if err != nil {
			t.Fatal(err)
		}
		again.Release(last)
		if last, err = again.Sample(); err != nil {
			t.Fatal(err)
		}
		if i > 2 && want == last {
			t.Fatal("the two Samplers share a snapshot")
		}
		got, wanted := collectortest.JSONOf(t, last), collectortest.JSONOf(t, want)
		if got != wanted {
			t.Fatalf("tick %d: a snapshot filled again says\n%s\nwhere a new one says\n%s", i, got, wanted)
		}
		if i == 39 {
			for _, key := range []string{`"chassis_id"`, `"lacpdu"`, `"carrier"`, `"share_tx"`, `"findings"`} {
				if !strings.Contains(got, key) {
					t.Errorf("the demo's snapshot has no %s: the comparison misses it", key)
				}
			}
		}
	}
}
