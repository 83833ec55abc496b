package collector

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/bondtop/bondtop/model"
)

// Series names one history line: a bond's or a slave's rx or tx bit rate.
type Series struct {
	Bond  string
	Slave string // "" for the bond itself
	Tx    bool
}

// clock is when a bond's samples were taken, a ring of fixed size. A
// bond's series (its rx and tx, and each slave's) are recorded together,
// so they share one clock and each keeps only its values (a column): an
// hour at 1 s of 64 bonds of 8 slaves is 1,152 series of 3,600 values,
// and 64 clocks.
type clock struct {
	// times are milliseconds after base (Unix milliseconds): 4 bytes a
	// sample, where Unix nanoseconds took 8. A millisecond is finer than
	// any pace (100 ms at least) and any graph's column.
	base  int64
	times []uint32
	size  int // capacity
	next  int // the oldest sample, where the next goes, once full
}

// newClock makes a clock of capacity n. Its storage grows as samples
// arrive: an hour at 100 ms is 36,000 samples, and allocating that for
// every bond on the first tick stalls a small machine for nothing.
func newClock(n int) *clock {
	return &clock{times: make([]uint32, 0, min(n, 64)), size: n}
}

func (c *clock) full() bool { return len(c.times) == c.size }

// oldest is the slot of the oldest sample held.
func (c *clock) oldest() int {
	if c.full() {
		return c.next
	}
	return 0
}

// tick takes the time of a new sample: the slot its values go to.
func (c *clock) tick(t time.Time) int {
	off := c.offset(t)
	if !c.full() {
		c.times = appendWithin(c.times, off, c.size)
		return len(c.times) - 1
	}
	slot := c.next
	c.times[slot] = off
	c.next = (c.next + 1) % c.size
	return slot
}

// first is the time of the oldest sample held.
func (c *clock) first() (time.Time, bool) {
	if len(c.times) == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(c.at(c.oldest())), true
}

// at is the time of slot i, in Unix milliseconds.
func (c *clock) at(i int) int64 { return c.base + int64(c.times[i]) }

// offset is t as the clock stores it, moving base when t is before it or
// too far after it for 32 bits (49 days): a clock set back, or a host
// asleep for weeks. What the clock holds is kept when the move leaves
// its times in range, and dropped otherwise (it is then that old; the
// columns follow at their next put).
func (c *clock) offset(t time.Time) uint32 {
	ms := t.UnixMilli()
	if len(c.times) == 0 {
		c.base = ms
	}
	if off := ms - c.base; off >= 0 && off <= math.MaxUint32 {
		return uint32(off)
	}
	base, newest := ms, ms
	for i := range c.times {
		base, newest = min(base, c.at(i)), max(newest, c.at(i))
	}
	if newest-base > math.MaxUint32 {
		c.times, c.next = c.times[:0], 0
		base = ms
	}
	for i := range c.times {
		c.times[i] = uint32(c.at(i) - base)
	}
	c.base = base
	return uint32(ms - base)
}

// grow raises the clock's capacity to n, keeping its samples in order,
// and its columns' values with them.
func (c *clock) grow(n int, cols []*column) {
	if n <= c.size {
		return
	}
	for _, col := range cols {
		col.fit(c)
		col.values = append(col.values[c.next:len(col.values):len(col.values)], col.values[:c.next]...)
	}
	c.times = append(c.times[c.next:len(c.times):len(c.times)], c.times[:c.next]...)
	c.size, c.next = n, 0
}

// column is one series' values, slot for slot with its bond's clock.
// Missing samples are NaN, so a graph shows a gap rather than a false
// zero.
type column struct {
	values []float32
}

// fit makes the column as long as its clock: NaN for the samples taken
// before the series was seen, cut when the clock started again.
func (col *column) fit(c *clock) {
	if len(col.values) > len(c.times) {
		col.values = col.values[:len(c.times)]
	}
	for len(col.values) < len(c.times) {
		col.values = appendWithin(col.values, float32(math.NaN()), c.size)
	}
}

// put stores v in slot, which the clock just ticked.
func (col *column) put(c *clock, slot int, v float32) {
	col.fit(c)
	col.values[slot] = v
}

// appendWithin appends v to s, growing its storage by doubling but never
// past size: a full ring holds no spare capacity (append's own growth
// left up to a quarter of an hour's ring unused).
func appendWithin[T any](s []T, v T, size int) []T {
	if len(s) == cap(s) && cap(s) < size {
		grown := make([]T, len(s), min(max(2*cap(s), 64), size))
		copy(grown, s)
		s = grown
	}
	return append(s, v)
}

// Point is one history sample.
type Point struct {
	Time  time.Time
	Value float32 // NaN when the rate was unknown
}

// pointsSince appends the points of col at or after t, oldest first.
func pointsSince(dst []Point, c *clock, col *column, t time.Time) []Point {
	n := len(c.times)
	start := c.oldest()
	from := t.UnixMilli()
	// Samples are taken in time order, so the first one at or after t is
	// found by bisection: a 1 h clock at 100 ms holds 36,000 samples, and
	// the graphs ask for the last minute on every frame.
	first := sort.Search(n, func(i int) bool { return c.at((start+i)%n) >= from })
	for i := first; i < n; i++ {
		j := (start + i) % n
		v := float32(math.NaN()) // a series seen after this sample
		if j < len(col.values) {
			v = col.values[j]
		}
		dst = append(dst, Point{time.UnixMilli(c.at(j)), v})
	}
	return dst
}

// History keeps the rates of every bond and slave. It is written by the
// Sampler and read by any goroutine (the UI), so it locks.
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
	// size is the capacity of each bond's fine clock; coarse is set once
	// the pace went below a second (the per-second clocks exist).
	size   int
	coarse bool
	bonds  map[string]*bondHistory
}

// fineSpan is what a series keeps at the sampling pace, below a second:
// the 1 min graph's columns are fractions of a second wide.
const fineSpan = time.Minute

// bondHistory is one bond's series on their shared clocks: the samples
// at the pace, and below a second one per second over the whole span,
// each series' peak of that second.
type bondHistory struct {
	fine   *clock
	coarse *clock // nil until the pace went below a second
	// The second being gathered into coarse, and its last sample's time,
	// which its peaks are stamped with.
	sec    int64
	lastAt time.Time
	open   bool

	records uint64 // Records of the bond so far
	tracks  []*track
	byKey   map[trackKey]*track
}

type trackKey struct {
	slave string // "" for the bond itself
	tx    bool
}

// track is one series' values.
type track struct {
	fine, coarse column
	peak         float32 // of the second being gathered
	written      uint64  // the bondHistory's record that last wrote it
}

func newBondHistory(size, coarseSize int) *bondHistory {
	g := &bondHistory{fine: newClock(size), byKey: make(map[trackKey]*track)}
	if coarseSize > 0 {
		g.coarse = newClock(coarseSize)
	}
	return g
}

// record takes one sample of the bond at t: every series of b, and NaN
// for those the bond had before and not now (a slave gone), so that no
// series keeps an old value in a slot of its clock.
func (g *bondHistory) record(t time.Time, b *model.BondSample) {
	g.records++
	slot := g.fine.tick(t)
	cslot, closing, newSecond := -1, false, false
	if g.coarse != nil {
		sec := t.Unix()
		if g.open && sec != g.sec {
			cslot, closing = g.coarse.tick(g.lastAt), true
		}
		newSecond = !g.open || closing
		g.sec, g.lastAt, g.open = sec, t, true
	}
	g.put(trackKey{}, b.RxBps, slot, cslot, newSecond)
	g.put(trackKey{tx: true}, b.TxBps, slot, cslot, newSecond)
	for j := range b.Slaves {
		sl := &b.Slaves[j]
		g.put(trackKey{slave: sl.Name}, sl.RxBps, slot, cslot, newSecond)
		g.put(trackKey{slave: sl.Name, tx: true}, sl.TxBps, slot, cslot, newSecond)
	}
	for _, k := range g.tracks {
		if k.written != g.records {
			g.push(k, float32(math.NaN()), slot, cslot, newSecond)
		}
	}
}

func (g *bondHistory) put(key trackKey, v *float64, slot, cslot int, newSecond bool) {
	val := float32(math.NaN())
	if v != nil {
		val = float32(*v)
	}
	g.push(g.track(key), val, slot, cslot, newSecond)
}

// track is the series of key, made on its first sample.
func (g *bondHistory) track(key trackKey) *track {
	k := g.byKey[key]
	if k == nil {
		k = &track{peak: float32(math.NaN())}
		g.byKey[key] = k
		g.tracks = append(g.tracks, k)
	}
	return k
}

// replay records, in time order, every sample old holds on its fine
// clock: Prepend puts them after the past it was given.
func (g *bondHistory) replay(old *bondHistory) {
	c := old.fine
	n, start := len(c.times), c.oldest()
	for i := range n {
		j := (start + i) % n
		g.records++
		slot := g.fine.tick(time.UnixMilli(c.at(j)))
		for key, k := range old.byKey {
			v := float32(math.NaN())
			if j < len(k.fine.values) {
				v = k.fine.values[j]
			}
			g.push(g.track(key), v, slot, -1, false)
		}
		for _, k := range g.tracks {
			if k.written != g.records {
				g.push(k, float32(math.NaN()), slot, -1, false)
			}
		}
	}
}

// push writes one series' sample: its value at the pace, and below a
// second the peak of the second just closed (cslot ≥ 0) before this
// sample starts (newSecond) or joins the next one's.
func (g *bondHistory) push(k *track, val float32, slot, cslot int, newSecond bool) {
	k.written = g.records
	k.fine.put(g.fine, slot, val)
	if g.coarse == nil {
		return
	}
	if cslot >= 0 {
		k.coarse.put(g.coarse, cslot, k.peak)
	}
	if newSecond || math.IsNaN(float64(k.peak)) || val > k.peak {
		k.peak = val
	}
}

// fineColumns are the series' values on the fine clock, for it to grow.
func (g *bondHistory) fineColumns() []*column {
	cols := make([]*column, len(g.tracks))
	for i, k := range g.tracks {
		cols[i] = &k.fine
	}
	return cols
}

// since appends the points of k at or after t, oldest first: the
// per-second peaks older than the fine clock's first sample, then the
// samples at the pace.
func (g *bondHistory) since(dst []Point, k *track, t time.Time) []Point {
	if g.coarse != nil {
		if first, ok := g.fine.first(); ok {
			n := len(dst)
			dst = pointsSince(dst, g.coarse, &k.coarse, t)
			for len(dst) > n && !dst[len(dst)-1].Time.Before(first) {
				dst = dst[:len(dst)-1]
			}
		}
	}
	return pointsSince(dst, g.fine, &k.fine, t)
}

// NewHistory keeps keep worth of samples taken every interval. The Sampler
// makes its own; a replay builds one from recorded snapshots.
func NewHistory(keep, interval time.Duration) *History {
	h := &History{keep: keep, bonds: make(map[string]*bondHistory)}
	h.size = max(int(keep/max(interval, time.Nanosecond)), 2)
	if interval < time.Second {
		h.coarse = true
		h.size = max(int(min(keep, fineSpan)/interval), 2)
	}
	return h
}

// coarseSize is the capacity of a per-second clock: the whole span.
func (h *History) coarseSize() int { return max(int(h.keep/time.Second), 2) }

// Pace tells the history that samples now come every interval: the clocks
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
			for _, g := range h.bonds {
				g.fine.grow(n, g.fineColumns())
			}
		}
		return
	}
	// Below a second for the first time: what the clocks hold (a sample a
	// second or slower) becomes the per-second history, and fine clocks
	// start at the new pace.
	h.coarse = true
	h.size = max(int(min(h.keep, fineSpan)/interval), 2)
	for _, g := range h.bonds {
		g.coarse = g.fine
		g.coarse.grow(h.coarseSize(), g.fineColumns())
		g.fine = newClock(h.size)
		g.open = false
		for _, k := range g.tracks {
			k.coarse, k.fine = k.fine, column{}
			k.peak = float32(math.NaN())
		}
	}
}

// Record appends the rates of every bond and slave in s.
func (h *History) Record(s *model.Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range s.Bonds {
		b := &s.Bonds[i]
		g := h.bonds[b.Name]
		if g == nil {
			coarse := 0
			if h.coarse {
				coarse = h.coarseSize()
			}
			g = newBondHistory(h.size, coarse)
			h.bonds[b.Name] = g
		}
		g.record(s.Time, b)
	}
}

// Prepend puts what came before the bond's history in front of it:
// samples (at times, oldest first) that another store kept, such as the
// fleet's Prometheus (Backfiller). Those not older than the first sample
// the history holds are left out; the ring keeps the newest when they do
// not all fit. Below a second's pace (per-second peaks beside the
// samples) it does nothing: a past at a coarser step would mix with them.
func (h *History) Prepend(bond string, times []time.Time, samples []model.BondSample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.coarse || len(times) != len(samples) {
		return
	}
	old := h.bonds[bond]
	var first time.Time
	have := false
	if old != nil {
		first, have = old.fine.first()
	}
	g := newBondHistory(h.size, 0)
	for i := range samples {
		if have && !times[i].Before(first) {
			break
		}
		g.record(times[i], &samples[i])
	}
	if old != nil {
		g.replay(old)
	}
	h.bonds[bond] = g
}

// Since returns the points of series k at or after t, oldest first.
func (h *History) Since(key Series, t time.Time) []Point {
	h.mu.RLock()
	defer h.mu.RUnlock()
	g := h.bonds[key.Bond]
	if g == nil {
		return nil
	}
	k := g.byKey[trackKey{slave: key.Slave, tx: key.Tx}]
	if k == nil {
		return nil
	}
	return g.since(nil, k, t)
}

// Capacity is the number of samples each series keeps at the pace (the
// fine clock; below a second, the per-second peaks come on top).
func (h *History) Capacity() int { return h.size }
