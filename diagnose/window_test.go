package diagnose

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
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
		snap := &collector.Snapshot{Time: at, IntervalSeconds: seconds, Bonds: []collector.BondSample{b}}
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
	w.Fill(&collector.Snapshot{Time: t0, Bonds: []collector.BondSample{b, other}})
	for i := 1; i <= 12; i++ {
		w.Fill(&collector.Snapshot{Time: t0.Add(time.Duration(i) * time.Second), IntervalSeconds: 1, Bonds: []collector.BondSample{b}})
	}
	names := slices.Sorted(maps.Keys(w.bonds))
	if !slices.Equal(names, []string{"bond0"}) {
		t.Fatalf("bonds kept: %v", names)
	}
}
