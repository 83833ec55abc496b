package collector

import (
	"math"
	"testing"
	"time"
)

// testRing is one series on its own clock.
type testRing struct {
	c   *clock
	col column
}

func newTestRing(n int) *testRing { return &testRing{c: newClock(n)} }

func (r *testRing) push(t time.Time, v *float64) {
	val := float32(math.NaN())
	if v != nil {
		val = float32(*v)
	}
	r.col.put(r.c, r.c.tick(t), val)
}

func (r *testRing) since(dst []Point, t time.Time) []Point { return pointsSince(dst, r.c, &r.col, t) }
func (r *testRing) first() (time.Time, bool)               { return r.c.first() }

// TestHistoryRingWraps fills a ring past its capacity: it keeps the newest
// samples, oldest first, and unknown rates stay NaN (a gap, not a zero).
func TestHistoryRingWraps(t *testing.T) {
	r := newTestRing(3)
	t0 := time.Unix(100, 0)
	for i := range 5 {
		v := float64(i)
		p := &v
		if i == 3 {
			p = nil
		}
		r.push(t0.Add(time.Duration(i)*time.Second), p)
	}
	got := r.since(nil, time.Time{})
	if len(got) != 3 || got[0].Value != 2 || !math.IsNaN(float64(got[1].Value)) || got[2].Value != 4 {
		t.Fatalf("%+v", got)
	}
	if got := r.since(nil, t0.Add(4*time.Second)); len(got) != 1 || got[0].Value != 4 {
		t.Fatalf("since the last second: %+v", got)
	}
}

// TestHistoryRingClockJumps: the ring keeps its times as 32-bit
// milliseconds after a base; a clock set back moves the base and keeps
// the samples, in the order they came; a jump of more than 49 days (a host
// asleep for weeks) drops what is held rather than wrap.
func TestHistoryRingClockJumps(t *testing.T) {
	r := newTestRing(10)
	t0 := time.Unix(1_000_000, 123_456_789)
	one := 1.0
	r.push(t0, &one)
	r.push(t0.Add(time.Second), &one)
	back := t0.Add(-time.Hour)
	r.push(back, &one) // set back by an hour
	got := r.since(nil, time.Time{})
	want := []time.Time{t0, t0.Add(time.Second), back}
	if len(got) != len(want) {
		t.Fatalf("%d points after the clock went back, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Truncate(time.Millisecond)) {
			t.Errorf("point %d at %v, want %v (to the millisecond)", i, got[i].Time, want[i])
		}
	}
	far := t0.Add(50 * 24 * time.Hour)
	r.push(far, &one)
	if got := r.since(nil, time.Time{}); len(got) != 1 || !got[0].Time.Equal(far.Truncate(time.Millisecond)) {
		t.Fatalf("after 50 days: %+v, want only the new point", got)
	}
	if first, ok := r.first(); !ok || !first.Equal(far.Truncate(time.Millisecond)) {
		t.Fatalf("first %v %v, want %v", first, ok, far)
	}
}

// TestHistorySinceCutsWhereTimeDoes checks the bisection against a plain
// scan on a wrapped ring, for every cut point.
func TestHistorySinceCutsWhereTimeDoes(t *testing.T) {
	r := newTestRing(50)
	t0 := time.Unix(1000, 0)
	for i := range 137 {
		v := float64(i)
		r.push(t0.Add(time.Duration(i)*100*time.Millisecond), &v)
	}
	for cut := -1; cut <= 140; cut++ {
		at := t0.Add(time.Duration(cut) * 100 * time.Millisecond)
		got := r.since(nil, at)
		want := 0
		for i := 87; i < 137; i++ { // the 50 newest samples
			if i >= cut {
				want++
			}
		}
		if len(got) != want || (want > 0 && got[0].Time.Before(at)) {
			t.Fatalf("cut %d: %d points from %v, want %d", cut, len(got), got, want)
		}
	}
}
