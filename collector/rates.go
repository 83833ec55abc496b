package collector

import (
	"github.com/bondtop/bondtop/bonding"
)

// maxPlausibleBps bounds a rate before it is believed: 1.6 Tbit/s is above
// any single bond today, so anything larger is a counter glitch that slipped
// past the went-back check (a reset followed by fast regrowth).
const maxPlausibleBps = 1.6e12

// totals copies the counters the source could read.
func totals(cs bonding.Counters) Totals {
	get := func(c bonding.Counter) *uint64 {
		if v, ok := cs.Get(c); ok {
			return &v
		}
		return nil
	}
	return Totals{
		RxBytes: get(bonding.RxBytes), TxBytes: get(bonding.TxBytes),
		RxPackets: get(bonding.RxPackets), TxPackets: get(bonding.TxPackets),
		RxErrors: get(bonding.RxErrors), TxErrors: get(bonding.TxErrors),
		RxDropped: get(bonding.RxDropped), TxDropped: get(bonding.TxDropped),
		RxOverErrors: get(bonding.RxOverErrors), RxFifoErrors: get(bonding.RxFifoErrors),
	}
}

// wentBack reports whether any counter present in both readings decreased:
// the interface was reset, re-enslaved or wrapped at 32 bits, so the whole
// interval is a gap for it.
func wentBack(prev, cur bonding.Counters) bool {
	for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
		p, okp := prev.Get(c)
		v, okc := cur.Get(c)
		if okp && okc && v < p {
			return true
		}
	}
	return false
}

// traffic computes an interface's Traffic from two readings seconds apart.
// hasPrev is false for the first reading of an interface.
func traffic(prev bonding.Counters, hasPrev bool, cur bonding.Counters, seconds float64) Traffic {
	t := Traffic{Totals: totals(cur)}
	if !hasPrev || seconds <= 0 || wentBack(prev, cur) {
		return t
	}
	delta := func(c bonding.Counter) (uint64, bool) {
		p, okp := prev.Get(c)
		v, okc := cur.Get(c)
		if !okp || !okc {
			return 0, false
		}
		return v - p, true
	}
	rate := func(c bonding.Counter, scale float64) *float64 {
		d, ok := delta(c)
		if !ok {
			return nil
		}
		r := float64(d) * scale / seconds
		if r > maxPlausibleBps {
			return nil
		}
		return &r
	}
	t.RxBps = rate(bonding.RxBytes, 8)
	t.TxBps = rate(bonding.TxBytes, 8)
	t.RxPps = rate(bonding.RxPackets, 1)
	t.TxPps = rate(bonding.TxPackets, 1)
	known := false
	count := func(c bonding.Counter) *uint64 {
		if d, ok := delta(c); ok {
			known = true
			return &d
		}
		return nil
	}
	iv := &ErrorCounts{
		RxErrors: count(bonding.RxErrors), TxErrors: count(bonding.TxErrors),
		RxDropped: count(bonding.RxDropped), TxDropped: count(bonding.TxDropped),
		RxOverErrors: count(bonding.RxOverErrors), RxFifoErrors: count(bonding.RxFifoErrors),
	}
	if known {
		t.Interval = iv
	}
	return t
}

// fillShares sets each slave's share of the bytes all slaves moved. Shares
// need every slave's rate: with one missing the split is unknown.
func fillShares(slaves []SlaveSample) {
	var sumRx, sumTx float64
	rxKnown, txKnown := true, true
	for i := range slaves {
		if r := slaves[i].RxBps; r != nil {
			sumRx += *r
		} else {
			rxKnown = false
		}
		if r := slaves[i].TxBps; r != nil {
			sumTx += *r
		} else {
			txKnown = false
		}
	}
	for i := range slaves {
		if rxKnown && sumRx > 0 {
			slaves[i].ShareRx = new(*slaves[i].RxBps / sumRx)
		}
		if txKnown && sumTx > 0 {
			slaves[i].ShareTx = new(*slaves[i].TxBps / sumTx)
		}
	}
}
