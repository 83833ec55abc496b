package drill

import (
	"sync"
	"time"
)

// gapMeter follows the datagrams one phase's measuring stream delivers to
// this host: the longest silence between two arrivals (or from the last
// arrival to the end of the phase, when the stream never came back), the
// datagrams lost by sequence number, and those that came out of order.
// The load engine calls datagram from its receiving goroutine. When two
// phases share one stream (--direction rx), handOver ends one phase's
// meter and starts the next one's; the old meter passes on what still
// reaches it.
type gapMeter struct {
	mu sync.Mutex
	// last is the last arrival, or the hand-over that started this
	// meter (the silence from it counts here).
	last time.Time
	// Datagrams numbered from firstSeq on are this meter's; counted of
	// them arrived, credit were already counted lost by the meter before.
	firstSeq uint64
	maxSeq   uint64
	counted  uint64
	credit   uint64
	seqKnown bool
	received uint64
	reorder  uint64
	longest  time.Duration
	gapStart time.Time
	started  chan struct{} // closed on the first datagram
	next     *gapMeter     // set by handOver
}

func newGapMeter() *gapMeter { return &gapMeter{started: make(chan struct{})} }

func (g *gapMeter) datagram(stream int, seq uint64, at time.Time) {
	g.mu.Lock()
	if g.next != nil {
		g.mu.Unlock()
		g.next.datagram(stream, seq, at)
		return
	}
	defer g.mu.Unlock()
	g.received++
	if g.received == 1 {
		close(g.started)
	}
	if !g.seqKnown {
		if !g.last.IsZero() && at.Sub(g.last) > g.longest {
			g.longest, g.gapStart = at.Sub(g.last), g.last
		}
		g.last, g.firstSeq, g.maxSeq, g.counted, g.seqKnown = at, seq, seq, 1, true
		return
	}
	if seq < g.firstSeq {
		g.reorder++ // a late one of the phase before
		return
	}
	g.counted++
	if seq <= g.maxSeq {
		g.reorder++
		return
	}
	if d := at.Sub(g.last); d > g.longest {
		g.longest, g.gapStart = d, g.last
	}
	g.maxSeq = seq
	if at.After(g.last) {
		g.last = at
	}
}

// count is how many datagrams arrived so far.
func (g *gapMeter) count() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.received
}

// gapReading is a phase's receive side.
type gapReading struct {
	// Longest is the longest silence; Start when it began; Open is set
	// when it lasted to the end of the phase.
	Longest   time.Duration
	Start     time.Time
	Open      bool
	Lost      uint64
	Reordered uint64
	Received  uint64
}

// read closes the phase at end, at rate datagrams per second. Datagrams
// due after the last one that arrived count as lost when the silence is
// longer than two datagrams' time.
func (g *gapMeter) read(end time.Time, rate int) gapReading {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, _ := g.readLocked(end, rate)
	return r
}

// readLocked is read; tailLost is how many of r.Lost the open silence at
// the end accounts for.
func (g *gapMeter) readLocked(end time.Time, rate int) (r gapReading, tailLost uint64) {
	r = gapReading{Longest: g.longest, Start: g.gapStart, Reordered: g.reorder, Received: g.received}
	if g.last.IsZero() {
		return r, 0
	}
	if g.seqKnown && g.maxSeq >= g.firstSeq {
		if expected := g.maxSeq - g.firstSeq + 1; expected > g.counted+g.credit {
			r.Lost = expected - g.counted - g.credit
		}
	}
	every := time.Second / time.Duration(rate)
	if tail := end.Sub(g.last); tail > 2*every {
		if tail > r.Longest {
			r.Longest, r.Start, r.Open = tail, g.last, true
		}
		tailLost = uint64(tail/every) - 1
		r.Lost += tailLost
	}
	return r, tailLost
}

// handOver ends this meter's phase at at (its reading), and returns the
// meter of the next phase on the same stream: the silence from at to the
// next datagram counts there, and so do the datagrams lost after the ones
// this meter counted.
func (g *gapMeter) handOver(at time.Time, rate int) (gapReading, *gapMeter) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, tailLost := g.readLocked(at, rate)
	n := newGapMeter()
	n.last = at
	if g.seqKnown {
		n.firstSeq, n.maxSeq, n.credit, n.seqKnown = g.maxSeq+1, g.maxSeq, tailLost, true
	}
	g.next = n
	return r, n
}

// sendLog keeps when each datagram of the stream this host sends left,
// by sequence number (1, 2, ...), so the datagrams the peer lost can be
// turned into the time they covered.
type sendLog struct {
	mu sync.Mutex
	at []time.Time
}

func (l *sendLog) sent(_ int, seq uint64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq == uint64(len(l.at))+1 {
		l.at = append(l.at, at)
	}
}

// gap is the longest silence the peer saw from this host in [from, end),
// reckoned from when the datagrams that arrived were sent: lost of them
// went missing, assumed in one run starting with the first datagram sent
// at or after outage. The run's silence spans from the last datagram
// before it to the first after it; a sender that stalled (its next
// datagrams left late, in a burst) lengthens the silence as it did at
// the peer, lost datagrams or not. A run that lasted to the end counts
// to end.
func (l *sendLog) gap(lost uint64, outage, from, end time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := len(l.at)
	for i, t := range l.at {
		if !t.Before(outage) {
			first = i
			break
		}
	}
	var longest time.Duration
	var prev time.Time
	for i, t := range l.at {
		if i >= first && i < first+int(lost) {
			continue // lost on the way
		}
		if t.Before(from) {
			prev = t
			continue
		}
		if !t.Before(end) {
			break
		}
		if !prev.IsZero() && t.Sub(prev) > longest {
			longest = t.Sub(prev)
		}
		prev = t
	}
	if first+int(lost) >= len(l.at) && !prev.IsZero() && end.Sub(prev) > longest {
		longest = end.Sub(prev)
	}
	return longest
}
