package ui

import (
	"time"

	"github.com/bondtop/bondtop/collector"
)

// slotPeaks is one series' peak per time slot, a slot being one chart
// column's span of absolute time. A slot that has passed never changes, so
// each draw reads from History only the samples that came since the last
// one (one per series at each tick) instead of copying the whole window:
// at 100 ms and a 1 h window that is one point instead of 36,000.
type slotPeaks struct {
	slot  time.Duration
	first int64     // the slot number (Unix time / slot) of peaks[0]
	peaks []float32 // colEmpty: no sample; NaN: only unknown rates
	// fetched is the newest sample read; zero until the first read.
	fetched time.Time
}

// columns returns the peaks of the dotCols slots of [from, to), reading
// what History has that the cache lacks. from and to are slot-aligned
// (alignWindow). The slice is the cache's: valid until the next call.
func (sp *slotPeaks) columns(h historyReader, k collector.Series, from, to time.Time, dotCols int) []float32 {
	slot := to.Sub(from) / time.Duration(dotCols)
	fromSlot := from.UnixNano() / int64(slot)
	if sp.slot != slot || fromSlot < sp.first || (!sp.fetched.IsZero() && to.Before(sp.fetched)) {
		// A new width or window, older data wanted, or time went back
		// (a replay): start over from the window's beginning.
		*sp = slotPeaks{slot: slot, first: fromSlot, peaks: sp.peaks[:0]}
	}
	// Drop the slots that scrolled out of the window.
	if drop := fromSlot - sp.first; drop > 0 {
		if drop >= int64(len(sp.peaks)) {
			sp.peaks = sp.peaks[:0]
		} else {
			sp.peaks = append(sp.peaks[:0], sp.peaks[drop:]...)
		}
		sp.first = fromSlot
	}
	since := from
	if !sp.fetched.IsZero() {
		since = sp.fetched.Add(time.Nanosecond)
	}
	for _, p := range h.Since(k, since) {
		if p.Time.After(to) {
			break // newer than the screen shows (paused): read it later
		}
		sp.fetched = p.Time
		i := p.Time.UnixNano()/int64(slot) - sp.first
		if i < 0 {
			continue
		}
		for int64(len(sp.peaks)) <= i {
			sp.peaks = append(sp.peaks, colEmpty)
		}
		cur := sp.peaks[i]
		switch {
		case isNaN(p.Value):
			if cur == colEmpty {
				sp.peaks[i] = p.Value
			}
		case cur == colEmpty || isNaN(cur) || p.Value > cur:
			sp.peaks[i] = p.Value
		}
	}
	for len(sp.peaks) < dotCols {
		sp.peaks = append(sp.peaks, colEmpty)
	}
	return sp.peaks[:dotCols]
}
