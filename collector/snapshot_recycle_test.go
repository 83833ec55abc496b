package collector

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestSamplerFillsWhatIsHandedBack follows snapshots handed back to a
// Sampler with Options.Recycle: the next tick fills one of them again, a
// snapshot still held is never written, one handed back twice panics, and
// one handed back after the Sampler forgot it is left alone. Without
// Recycle, Release does nothing.
func TestSamplerFillsWhatIsHandedBack(t *testing.T) {
	rt := tickingRoot(t, true)
	rt.recycle = false // this test hands back itself
	s := rt.s

	a := rt.sample()
	s.Release(a)
	if b := rt.sample(); b != a {
		t.Fatalf("the tick after a snapshot was handed back made a new one")
	}

	held := rt.sample()
	before := jsonOf(t, held)
	for range 3 * lentSnapshots {
		next := rt.sample()
		if next == held {
			t.Fatalf("a snapshot still held was filled again")
		}
		s.Release(next)
	}
	if after := jsonOf(t, held); after != before {
		t.Errorf("a held snapshot changed while others were handed back and filled:\nbefore %s\nafter  %s", before, after)
	}

	twice := rt.sample()
	s.Release(twice)
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("a snapshot handed back twice did not panic")
			}
		}()
		s.Release(twice)
	}()
	rt.sample() // fills twice again

	// Never handed back: the store forgets the oldest as new ones come.
	old := rt.sample()
	for range lentSnapshots {
		rt.sample()
	}
	s.Release(old)
	if rt.sample() == old {
		t.Errorf("a snapshot handed back after it was forgotten was filled again")
	}

	plain := tickingRoot(t, false)
	a = plain.sample()
	plain.s.Release(a)
	if plain.sample() == a {
		t.Errorf("without Recycle a snapshot handed back was filled again")
	}
}

// TestCloneSharesNothingFilledAgain keeps a Clone of a bond's sample
// while its snapshot is handed back and filled again by ticks whose
// counters move: the clone must not change, and none of its numbers may
// live where the snapshot's do.
func TestCloneSharesNothingFilledAgain(t *testing.T) {
	rt := tickingRoot(t, true)
	snap := rt.sample()
	c := snap.Bonds[0].Clone()
	if got, want := jsonOf(t, c), jsonOf(t, &snap.Bonds[0]); got != want {
		t.Fatalf("the clone differs from the sample:\n%s\nwant\n%s", got, want)
	}
	sharedNumbers(t, reflect.ValueOf(c).Elem(), reflect.ValueOf(&snap.Bonds[0]).Elem(), "BondSample")
	before := jsonOf(t, c)
	for range 5 {
		rt.tick() // hands back the snapshot before
	}
	if after := jsonOf(t, c); after != before {
		t.Errorf("a clone changed when its snapshot was filled again:\nbefore %s\nafter  %s", before, after)
	}
}

// sharedNumbers fails for every pointer to a number (or a slice element)
// that c and orig share: those are what a Sampler fills again. It follows
// structs, embedded ones included, and slices of them; other pointers
// (flow tables, switch sides) are shared on purpose.
func sharedNumbers(t *testing.T, c, orig reflect.Value, path string) {
	t.Helper()
	switch c.Kind() {
	case reflect.Struct:
		for i := range c.NumField() {
			if c.Type().Field(i).IsExported() {
				sharedNumbers(t, c.Field(i), orig.Field(i), path+"."+c.Type().Field(i).Name)
			}
		}
	case reflect.Slice:
		if c.Len() > 0 && c.Pointer() == orig.Pointer() && c.Type().Elem().Kind() == reflect.Struct {
			t.Errorf("%s: the clone shares the array", path)
		}
		for i := range min(c.Len(), orig.Len()) {
			sharedNumbers(t, c.Index(i), orig.Index(i), path)
		}
	case reflect.Pointer:
		if c.IsNil() || orig.IsNil() {
			return
		}
		switch c.Elem().Kind() {
		case reflect.Uint64, reflect.Float64:
			if c.Pointer() == orig.Pointer() {
				t.Errorf("%s: the clone shares the number", path)
			}
		case reflect.Struct:
			if c.Type().Elem() == reflect.TypeFor[ErrorCounts]() {
				if c.Pointer() == orig.Pointer() {
					t.Errorf("%s: the clone shares the counts", path)
				}
				sharedNumbers(t, c.Elem(), orig.Elem(), path)
			}
		}
	}
}

// TestRecycledSnapshotsAcrossGoroutines runs a recycling Sampler over the
// demo as the dashboard uses it: Run hands each snapshot to a consumer on
// another goroutine, which reads all of it, then hands it back. Under
// -race, a tick that filled a snapshot the consumer still read would be
// reported.
func TestRecycledSnapshotsAcrossGoroutines(t *testing.T) {
	s := NewSampler(NewDemoSource(time.Now), Options{Interval: MinInterval, Recycle: true, History: NoHistory})
	if _, err := s.Sample(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps := make(chan *Snapshot, 4)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, func(snap *Snapshot) { snaps <- snap }) }()
	seen := map[*Snapshot]int{}
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
	if len(seen) > lentSnapshots {
		t.Errorf("15 snapshots handed back as they came were %d different ones, want them filled again", len(seen))
	}
}

// TestRecycledSnapshotsReadAsNew: snapshots filled again say exactly
// what new ones say. Two Samplers over the same demo clock (neighbours
// heard, LACPDU and carrier counters, flows, the meter), one recycling and
// handing back each snapshot at the next tick: every tick's JSON is the
// same.
func TestRecycledSnapshotsReadAsNew(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1_000_000, 0)}
	fresh := NewSampler(NewDemoSource(clk.Now), Options{Interval: MinInterval, Clock: clk.Now})
	again := NewSampler(NewDemoSource(clk.Now), Options{Interval: MinInterval, Clock: clk.Now, Recycle: true})
	var last *Snapshot
	for i := range 40 {
		clk.Advance(MinInterval)
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
		got, wanted := jsonOf(t, last), jsonOf(t, want)
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
