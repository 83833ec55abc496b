package diagnose

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/bondtop/bondtop/model"
)

// TestWindowRunningSums drives a window through a long run (samples
// leaving, a failover, the slave coming back) and checks the running
// shares against the bytes summed afresh from the rates the test made.
func TestWindowRunningSums(t *testing.T) {
	const span = 30 * time.Second
	w := NewWindow(span)
	rng := rand.New(rand.NewPCG(1, 2))
	type tick struct {
		tx      [2]float64
		eth1Up  bool
		seconds float64
	}
	var ticks []tick
	at := t0
	for i := range 2000 {
		seconds := 0.0
		if i > 0 {
			seconds = 0.05 + rng.Float64()*1.5 // an uneven pace
			at = at.Add(time.Duration(seconds * float64(time.Second)))
		}
		up := i < 700 || i > 760
		tk := tick{tx: [2]float64{rng.Float64() * 900e6, rng.Float64() * 300e6}, eth1Up: up, seconds: seconds}
		ticks = append(ticks, tk)
		b := withTx(xorBond(slave("eth0", 1000), slave("eth1", 1000)), tk.tx[0], tk.tx[1])
		if !up {
			b.Slaves[1].MIIStatus = new("down")
		}
		snap := &model.Snapshot{Time: at, IntervalSeconds: seconds, Bonds: []model.BondSample{b}}
		w.Fill(snap)

		// Afresh: the samples within the span, from the last change of
		// eth1's link on, whose first interval lies before the change.
		var times []time.Time
		tt := t0
		for k := range ticks {
			if k > 0 {
				tt = tt.Add(time.Duration(ticks[k].seconds * float64(time.Second)))
			}
			times = append(times, tt)
		}
		from := 0
		for k := range ticks {
			if at.Sub(times[k]) <= span {
				from = k
				break
			}
		}
		changedAt := -1
		for k := from + 1; k < len(ticks); k++ {
			if ticks[k].eth1Up != ticks[k-1].eth1Up {
				changedAt = k
			}
		}
		var want [2]float64
		secs := 0.0
		for k := from; k < len(ticks); k++ {
			if k <= changedAt {
				continue
			}
			if k == from && from > 0 && ticks[k].eth1Up != ticks[k-1].eth1Up {
				continue // the change sample, at the window's front
			}
			for j := range 2 {
				want[j] += ticks[k].tx[j] * ticks[k].seconds / 8
			}
			secs += ticks[k].seconds
		}
		got := w.bonds["bond0"].shares(&snap.Bonds[0], true)
		for j := range 2 {
			if math.Abs(got.Bytes[j]-want[j]) > 1e-6*max(1, want[j]) {
				t.Fatalf("tick %d: %s bytes %v, summed afresh %v", i, got.Slaves[j], got.Bytes[j], want[j])
			}
		}
		if math.Abs(got.Seconds-secs) > 1e-6 {
			t.Fatalf("tick %d: seconds %v, summed afresh %v", i, got.Seconds, secs)
		}
	}
	if n := len(w.bonds["bond0"].samples); n > 30/0.05+2 {
		t.Fatalf("%d samples kept for a %v window", n, span)
	}
}

// TestWindowForgetsGoneBonds: a bond absent for longer than the span
// leaves the window.
func TestWindowForgetsGoneBonds(t *testing.T) {
	w := NewWindow(10 * time.Second)
	b := withTx(xorBond(slave("eth0", 1000), slave("eth1", 1000)), 1, 1)
	other := b
	other.Name = "bond1"
	w.Fill(&model.Snapshot{Time: t0, Bonds: []model.BondSample{b, other}})
	for i := 1; i <= 12; i++ {
		w.Fill(&model.Snapshot{Time: t0.Add(time.Duration(i) * time.Second), IntervalSeconds: 1, Bonds: []model.BondSample{b}})
	}
	names := slices.Sorted(maps.Keys(w.bonds))
	if !slices.Equal(names, []string{"bond0"}) {
		t.Fatalf("bonds kept: %v", names)
	}
}

// TestWindowReanalyzesOnEventOrEverySecond: below a second, a bond's
// findings are made again once a second, or at once when the snapshot has
// an event of the bond; the snapshots between carry the last findings.
func TestWindowReanalyzesOnEventOrEverySecond(t *testing.T) {
	healthy := withTx(xorBond(slave("eth0", 100), slave("eth1", 100)), 1e6, 1e6)
	half := withTx(xorBond(slave("eth0", 100), slave("eth1", 100)), 1e6, 1e6)
	half.Slaves[1].Duplex = new("half")
	snap := func(at time.Duration, b model.BondSample, evs ...model.Event) *model.Snapshot {
		return &model.Snapshot{Time: t0.Add(at), IntervalSeconds: 0.1, Bonds: []model.BondSample{b}, Events: evs}
	}
	ms := time.Millisecond

	for _, c := range []struct {
		name  string
		at    time.Duration // of the half-duplex snapshot, after the healthy one at 0
		event bool
		want  bool // the half-duplex finding is there
	}{
		{"carried between analyses", 100 * ms, false, false},
		{"an event of the bond: at once", 100 * ms, true, true},
		{"a second later", time.Second, false, true},
		{"a ticker's second, a little early", time.Second - 3*ms, false, true},
		{"short of a second by more than half an interval", 900 * ms, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := NewWindow(0)
			first := snap(0, healthy)
			w.Fill(first)
			if find(first.Bonds[0].Findings, IDHalfDuplex) != nil {
				t.Fatalf("healthy bond: %v", ids(first.Bonds[0].Findings))
			}
			var evs []model.Event
			if c.event {
				evs = append(evs, model.Event{Time: t0.Add(c.at), Bond: half.Name, Slave: "eth1", Kind: model.EventSlaveState})
			}
			s := snap(c.at, half, evs...)
			w.Fill(s)
			if got := find(s.Bonds[0].Findings, IDHalfDuplex) != nil; got != c.want {
				t.Errorf("half-duplex finding %v, want %v (findings %v)", got, c.want, ids(s.Bonds[0].Findings))
			}
		})
	}

	t.Run("an event of another bond does not count", func(t *testing.T) {
		w := NewWindow(0)
		w.Fill(snap(0, healthy))
		s := snap(100*ms, half, model.Event{Time: t0.Add(100 * ms), Bond: "other", Kind: model.EventLinkDown})
		w.Fill(s)
		if find(s.Bonds[0].Findings, IDHalfDuplex) != nil {
			t.Errorf("judged again on another bond's event: %v", ids(s.Bonds[0].Findings))
		}
	})

	t.Run("carried findings are each snapshot's own", func(t *testing.T) {
		w := NewWindow(0)
		first := snap(0, half)
		w.Fill(first)
		second := snap(100*ms, half)
		w.Fill(second)
		if len(second.Bonds[0].Findings) == 0 {
			t.Fatal("no findings carried")
		}
		// A consumer appending to one snapshot's findings (a drill left
		// behind) must not change the next one's.
		second.Bonds[0].Findings = append(second.Bonds[0].Findings, Finding{ID: "appended"})
		third := snap(200*ms, half)
		w.Fill(third)
		fs := third.Bonds[0].Findings
		if find(fs, "appended") != nil || len(fs) != len(first.Bonds[0].Findings) {
			t.Errorf("third snapshot's findings %v, want those of the first %v", ids(fs), ids(first.Bonds[0].Findings))
		}
		// No room past the end: an append to the third copies, whatever
		// the capacity of the analysis's slice was.
		if cap(fs) != len(fs) {
			t.Errorf("carried findings: capacity %d past length %d, shared with the other snapshots", cap(fs), len(fs))
		}
		third.Bonds[0].Findings = append(fs, Finding{ID: "third"})
		if last := second.Bonds[0].Findings[len(second.Bonds[0].Findings)-1]; last.ID != "appended" {
			t.Errorf("the second snapshot's appended finding became %q", last.ID)
		}
	})
}

// TestWindowFillDoesNotGrow: on a healthy bond whose window is full,
// thousands of ticks at 100 ms (nine snapshots of ten carry the last
// findings, one judges the bond again) hold no more memory than the
// window did when it was full, for one bond and for several.
func TestWindowFillDoesNotGrow(t *testing.T) {
	for _, sz := range []struct{ bonds, slaves int }{{1, 4}, {4, 4}} {
		t.Run(fmt.Sprintf("%dx%d", sz.bonds, sz.slaves), func(t *testing.T) {
			fill := fullWindow(t, sz.bonds, sz.slaves)
			before := heapAlloc()
			for range 3000 {
				fill()
			}
			after := heapAlloc()
			runtime.KeepAlive(fill) // its snapshots count in both
			t.Logf("heap %d -> %d bytes over 3,000 ticks", before, after)
			if grown := int64(after) - int64(before); grown > 64<<10 {
				t.Errorf("the heap grew by %d bytes over 3,000 ticks at 100 ms of a full window (%d bonds of %d slaves), want none", grown, sz.bonds, sz.slaves)
			}
		})
	}
}

// heapAlloc is the bytes of live objects after two collections.
func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
