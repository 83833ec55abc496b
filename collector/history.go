package collector

import (
	"math"
	"sort"
	"sync"
	"time"
)

// Series names one history line: a bond's or a slave's rx or tx bit rate.
type Series struct {
	Bond  string
	Slave string // "" for the bond itself
	Tx    bool
}

// Ring is a fixed-size history of one series. Missing samples are NaN,
// so a graph shows a gap rather than a false zero.
type Ring struct {
	// times are milliseconds after base (Unix milliseconds): 4 bytes a
	// sample beside its value's 4, where Unix nanoseconds took 8. An hour
	// at 1 s of 64 bonds of 8 slaves is 1,152 series of 3,600 samples. A
	// millisecond is finer than any pace (100 ms at least) and any
	// graph's column.
	base   int64
	times  []uint32
	values []float32
	size   int // capacity
	next   int // where the next sample goes once full
	full   bool
}

// newRing makes a ring of capacity n. Its storage grows as samples arrive:
// an hour at 100 ms is 36,000 samples per series, and allocating that for
// every series on the first tick stalls a small machine for nothing.
func newRing(n int) *Ring {
	return &Ring{times: make([]uint32, 0, min(n, 64)), values: make([]float32, 0, min(n, 64)), size: n}
}

func (r *Ring) push(t time.Time, v *float64) {
	val := float32(math.NaN())
	if v != nil {
		val = float32(*v)
	}
	r.pushValue(t, val)
}

// first is the time of the oldest sample held.
func (r *Ring) first() (time.Time, bool) {
	switch {
	case len(r.values) == 0:
		return time.Time{}, false
	case r.full:
		return time.UnixMilli(r.at(r.next)), true
	}
	return time.UnixMilli(r.at(0)), true
}

// at is the time of sample i, in Unix milliseconds.
func (r *Ring) at(i int) int64 { return r.base + int64(r.times[i]) }

// offset is t as the ring stores it, moving base when t is before it or
// too far after it for 32 bits (49 days): a clock set back, or a host
// asleep for weeks. What the ring holds is kept when the move leaves its
// times in range, and dropped otherwise (it is then that old).
func (r *Ring) offset(t time.Time) uint32 {
	ms := t.UnixMilli()
	if len(r.values) == 0 {
		r.base = ms
	}
	if off := ms - r.base; off >= 0 && off <= math.MaxUint32 {
		return uint32(off)
	}
	base, newest := ms, ms
	for i := range r.times {
		base, newest = min(base, r.at(i)), max(newest, r.at(i))
	}
	if newest-base > math.MaxUint32 {
		r.times, r.values, r.next, r.full = r.times[:0], r.values[:0], 0, false
		base = ms
	}
	for i := range r.times {
		r.times[i] = uint32(r.at(i) - base)
	}
	r.base = base
	return uint32(ms - base)
}

func (r *Ring) pushValue(t time.Time, val float32) {
	off := r.offset(t)
	if !r.full && len(r.values) < r.size {
		r.times = append(r.times, off)
		r.values = append(r.values, val)
		if len(r.values) == r.size {
			r.full = true
		}
		return
	}
	r.times[r.next] = off
	r.values[r.next] = val
	r.next = (r.next + 1) % r.size
}

// grow raises the ring's capacity to n, keeping its samples in order.
func (r *Ring) grow(n int) {
	if n <= r.size {
		return
	}
	if r.full {
		r.times = append(r.times[r.next:len(r.times):len(r.times)], r.times[:r.next]...)
		r.values = append(r.values[r.next:len(r.values):len(r.values)], r.values[:r.next]...)
		r.next, r.full = 0, false
	}
	r.size = n
}

// Point is one history sample.
type Point struct {
	Time  time.Time
	Value float32 // NaN when the rate was unknown
}

// since copies the points at or after t, oldest first, appending to dst.
func (r *Ring) since(dst []Point, t time.Time) []Point {
	n := len(r.values)
	start := 0
	if r.full {
		start = r.next
	}
	from := t.UnixMilli()
	// Samples are appended in time order, so the first one at or after t
	// is found by bisection: a 1 h ring at 100 ms holds 36,000 samples, and
	// the graphs ask for the last minute on every frame.
	first := sort.Search(n, func(i int) bool { return r.at((start+i)%len(r.values)) >= from })
	for i := first; i < n; i++ {
		j := (start + i) % len(r.values)
		dst = append(dst, Point{time.UnixMilli(r.at(j)), r.values[j]})
	}
	return dst
}

// History keeps a ring per series. It is written by the Sampler and read by
// any goroutine (the UI), so it locks.
//
// At a pace faster than a second, the span it keeps would cost ten (or
// more) samples a second per series for the whole span: an hour at 100 ms
// is 36,000 samples, and a host with 64 bonds of 8 slaves has 1,152
// series. So below a second each series keeps the last fineSpan at the
// sampling pace, and the whole span as one peak per second (the graphs
// draw the peak of each column, and a column of the 5 min or 1 h graph
// spans seconds): memory is bounded by the span at any pace.
type History struct {
	mu   sync.RWMutex
	keep time.Duration
	// size is the capacity of each series' fine ring; coarse is set once
	// the pace went below a second (the per-second rings exist).
	size   int
	coarse bool
	series map[Series]*track
}

// fineSpan is what a series keeps at the sampling pace, below a second:
// the 1 min graph's columns are fractions of a second wide.
const fineSpan = time.Minute

// track is one series: its samples at the pace, and below a second, one
// peak per second over the whole span.
type track struct {
	fine   *Ring
	coarse *Ring // nil until the pace went below a second
	// The second being gathered into coarse: its peak and last time.
	sec    int64
	peak   float32
	peakAt time.Time
	open   bool
}

func (k *track) push(t time.Time, v *float64) {
	k.fine.push(t, v)
	if k.coarse == nil {
		return
	}
	sec := t.Unix()
	if k.open && sec != k.sec {
		k.coarse.pushValue(k.peakAt, k.peak)
		k.open = false
	}
	val := float32(math.NaN())
	if v != nil {
		val = float32(*v)
	}
	if !k.open || math.IsNaN(float64(k.peak)) || val > k.peak {
		k.peak = val
	}
	k.sec, k.peakAt, k.open = sec, t, true
}

// since appends the points at or after t, oldest first: the per-second
// peaks older than the fine ring's first sample, then the fine ring.
func (k *track) since(dst []Point, t time.Time) []Point {
	if k.coarse != nil {
		if first, ok := k.fine.first(); ok {
			n := len(dst)
			dst = k.coarse.since(dst, t)
			for len(dst) > n && !dst[len(dst)-1].Time.Before(first) {
				dst = dst[:len(dst)-1]
			}
		}
	}
	return k.fine.since(dst, t)
}

// NewHistory keeps keep worth of samples taken every interval. The Sampler
// makes its own; a replay builds one from recorded snapshots.
func NewHistory(keep, interval time.Duration) *History {
	h := &History{keep: keep, series: make(map[Series]*track)}
	h.size = max(int(keep/max(interval, time.Nanosecond)), 2)
	if interval < time.Second {
		h.coarse = true
		h.size = max(int(min(keep, fineSpan)/interval), 2)
	}
	return h
}

// coarseSize is the capacity of a per-second ring: the whole span.
func (h *History) coarseSize() int { return max(int(h.keep/time.Second), 2) }

// Pace tells the history that samples now come every interval: the rings
// grow so they still hold the span they keep (below a second, through
// the per-second peaks). At a slower pace they keep their size.
func (h *History) Pace(interval time.Duration) {
	if interval <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if interval >= time.Second || h.coarse {
		n := int(h.keep / interval)
		if interval < time.Second {
			n = int(min(h.keep, fineSpan) / interval)
		}
		if n > h.size {
			h.size = n
			for _, k := range h.series {
				k.fine.grow(n)
			}
		}
		return
	}
	// Below a second for the first time: what the rings hold (a sample a
	// second or slower) becomes the per-second history, and fine rings
	// start at the new pace.
	h.coarse = true
	h.size = max(int(min(h.keep, fineSpan)/interval), 2)
	for _, k := range h.series {
		k.coarse = k.fine
		k.coarse.grow(h.coarseSize())
		k.fine = newRing(h.size)
	}
}

// Record appends the rates of every bond and slave in s.
func (h *History) Record(s *Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	put := func(key Series, v *float64) {
		k := h.series[key]
		if k == nil {
			k = &track{fine: newRing(h.size)}
			if h.coarse {
				k.coarse = newRing(h.coarseSize())
			}
			h.series[key] = k
		}
		k.push(s.Time, v)
	}
	for i := range s.Bonds {
		b := &s.Bonds[i]
		put(Series{Bond: b.Name}, b.RxBps)
		put(Series{Bond: b.Name, Tx: true}, b.TxBps)
		for j := range b.Slaves {
			sl := &b.Slaves[j]
			put(Series{Bond: b.Name, Slave: sl.Name}, sl.RxBps)
			put(Series{Bond: b.Name, Slave: sl.Name, Tx: true}, sl.TxBps)
		}
	}
}

// Since returns the points of series k at or after t, oldest first.
func (h *History) Since(key Series, t time.Time) []Point {
	h.mu.RLock()
	defer h.mu.RUnlock()
	k := h.series[key]
	if k == nil {
		return nil
	}
	return k.since(nil, t)
}

// Capacity is the number of samples each series keeps at the pace (the
// fine ring; below a second, the per-second peaks come on top).
func (h *History) Capacity() int { return h.size }
