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
	// times are Unix nanoseconds: a third of a time.Time's size, which
	// matters at 36,000 samples per series (1 h at 100 ms).
	times  []int64
	values []float32
	size   int // capacity
	next   int // where the next sample goes once full
	full   bool
}

// newRing makes a ring of capacity n. Its storage grows as samples arrive:
// an hour at 100 ms is 36,000 samples per series, and allocating that for
// every series on the first tick stalls a small machine for nothing.
func newRing(n int) *Ring {
	return &Ring{times: make([]int64, 0, min(n, 64)), values: make([]float32, 0, min(n, 64)), size: n}
}

func (r *Ring) push(t time.Time, v *float64) {
	val := float32(math.NaN())
	if v != nil {
		val = float32(*v)
	}
	if !r.full && len(r.values) < r.size {
		r.times = append(r.times, t.UnixNano())
		r.values = append(r.values, val)
		if len(r.values) == r.size {
			r.full = true
		}
		return
	}
	r.times[r.next] = t.UnixNano()
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
	from := t.UnixNano()
	// Samples are appended in time order, so the first one at or after t
	// is found by bisection: a 1 h ring at 100 ms holds 36,000 samples, and
	// the graphs ask for the last minute on every frame.
	first := sort.Search(n, func(i int) bool { return r.times[(start+i)%len(r.values)] >= from })
	for i := first; i < n; i++ {
		j := (start + i) % len(r.values)
		dst = append(dst, Point{time.Unix(0, r.times[j]), r.values[j]})
	}
	return dst
}

// History keeps a ring per series. It is written by the Sampler and read by
// any goroutine (the UI), so it locks.
type History struct {
	mu     sync.RWMutex
	keep   time.Duration
	size   int
	series map[Series]*Ring
}

// NewHistory keeps keep worth of samples taken every interval. The Sampler
// makes its own; a replay builds one from recorded snapshots.
func NewHistory(keep, interval time.Duration) *History {
	n := int(keep / interval)
	if n < 2 {
		n = 2
	}
	return &History{keep: keep, size: n, series: make(map[Series]*Ring)}
}

// Pace tells the history that samples now come every interval: at a
// faster pace the rings grow so they still hold the span they keep. At a
// slower one they keep their size (and, once full again, a longer span):
// their memory is bounded by the span at the fastest pace used.
func (h *History) Pace(interval time.Duration) {
	if interval <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n := int(h.keep / interval)
	if n <= h.size {
		return
	}
	h.size = n
	for _, r := range h.series {
		r.grow(n)
	}
}

// Record appends the rates of every bond and slave in s.
func (h *History) Record(s *Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	put := func(k Series, v *float64) {
		r := h.series[k]
		if r == nil {
			r = newRing(h.size)
			h.series[k] = r
		}
		r.push(s.Time, v)
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
func (h *History) Since(k Series, t time.Time) []Point {
	h.mu.RLock()
	defer h.mu.RUnlock()
	r := h.series[k]
	if r == nil {
		return nil
	}
	return r.since(nil, t)
}

// Capacity is the number of samples each series keeps.
func (h *History) Capacity() int { return h.size }
