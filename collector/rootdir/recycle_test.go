package rootdir

import (
	"reflect"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/bondtop/bondtop/model"
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
	before := collectortest.JSONOf(t, held)
	for range 3 * collector.LentSnapshots {
		next := rt.sample()
		if next == held {
			t.Fatalf("a snapshot still held was filled again")
		}
		s.Release(next)
	}
	if after := collectortest.JSONOf(t, held); after != before {
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
	for range collector.LentSnapshots {
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
// counters move: the clone must not change, and none of its numbers or
// switch sides may live where the snapshot's do. Over a --root tree and
// over the demo (neighbours, LACPDU and carrier counters, flows).
func TestCloneSharesNothingFilledAgain(t *testing.T) {
	rt := tickingRoot(t, true)
	clk := collectortest.NewClock(time.Unix(1_000_000, 0))
	demoSampler := collector.NewSampler(demo.New(clk.Now), collector.Options{Interval: collector.MinInterval, Clock: clk.Now, Recycle: true})
	var last *model.Snapshot
	demoTick := func() *model.Snapshot {
		clk.Advance(collector.MinInterval)
		demoSampler.Release(last)
		var err error
		if last, err = demoSampler.Sample(); err != nil {
			t.Fatal(err)
		}
		return last
	}
	for _, c := range []struct {
		name string
		tick func() *model.Snapshot
	}{{"root", rt.sample}, {"demo", demoTick}} {
		snap := c.tick()
		b := &snap.Bonds[0]
		if c.name == "demo" && (b.Slaves[0].SwitchSide == nil || b.Slaves[0].Neighbor == nil || b.Slaves[0].LACPDU == nil ||
			b.Slaves[0].Predicted == nil) {
			t.Fatalf("demo: the slave has no switch side or prediction to clone: %+v", b.Slaves[0])
		}
		cl := b.Clone()
		if got, want := collectortest.JSONOf(t, cl), collectortest.JSONOf(t, b); got != want {
			t.Fatalf("%s: the clone differs from the sample:\n%s\nwant\n%s", c.name, got, want)
		}
		sharedRooms(t, reflect.ValueOf(cl).Elem(), reflect.ValueOf(b).Elem(), c.name+": BondSample")
		before := collectortest.JSONOf(t, cl)
		for range 5 {
			c.tick() // hands back the snapshot before
		}
		if after := collectortest.JSONOf(t, cl); after != before {
			t.Errorf("%s: a clone changed when its snapshot was filled again:\nbefore %s\nafter  %s", c.name, before, after)
		}
	}
}

// filledAgain are the structs a recycled snapshot holds in rooms of its
// own, besides numbers: a clone must have its own.
var filledAgain = map[reflect.Type]bool{
	reflect.TypeFor[model.ErrorCounts]():  true,
	reflect.TypeFor[model.SwitchSide]():   true,
	reflect.TypeFor[neighbors.Neighbor](): true,
	reflect.TypeFor[model.LACPDUSample](): true,
	reflect.TypeFor[model.Predicted]():    true,
}

// sharedRooms fails for every pointer to a number, or to a struct of
// filledAgain, and the slaves' array, that c and orig share: those are
// what a Sampler fills again (a neighbour's VLANs, decoded from its
// frame, are never written, and stay shared). It follows structs, embedded ones included,
// slices of them and pointers to filledAgain; other pointers (flow
// tables, measured traffic, carrier counts) are shared on purpose.
func sharedRooms(t *testing.T, c, orig reflect.Value, path string) {
	t.Helper()
	switch c.Kind() {
	case reflect.Struct:
		for i := range c.NumField() {
			if c.Type().Field(i).IsExported() {
				sharedRooms(t, c.Field(i), orig.Field(i), path+"."+c.Type().Field(i).Name)
			}
		}
	case reflect.Slice:
		if c.Len() > 0 && c.Pointer() == orig.Pointer() && c.Type().Elem() == reflect.TypeFor[model.SlaveSample]() {
			t.Errorf("%s: the clone shares the array", path)
		}
		if c.Type().Elem().Kind() == reflect.Struct {
			for i := range min(c.Len(), orig.Len()) {
				sharedRooms(t, c.Index(i), orig.Index(i), path)
			}
		}
	case reflect.Pointer:
		if c.IsNil() || orig.IsNil() {
			return
		}
		switch elem := c.Type().Elem(); {
		case elem.Kind() == reflect.Uint64 || elem.Kind() == reflect.Float64:
			if c.Pointer() == orig.Pointer() {
				t.Errorf("%s: the clone shares the number", path)
			}
		case filledAgain[elem]:
			if c.Pointer() == orig.Pointer() {
				t.Errorf("%s: the clone shares the %s", path, elem.Name())
			}
			sharedRooms(t, c.Elem(), orig.Elem(), path)
		}
	}
}
