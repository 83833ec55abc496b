package drill

import (
	"sync"
	"time"
)

// gapMeter follows the datagrams one phase's measuring stream delivers to
// this host: the longest silence between two arrivals (or from the last
// arrival to the end of the phase, when the stream never came back), the
// datagrams lost by sequence number, and those that came out of order.
// The load engine calls datagram from its receiving goroutine.
type gapMeter struct {
	mu       sync.Mutex
	first    time.Time
	last     time.Time
	firstSeq uint64
	maxSeq   uint64
	received uint64
	reorder  uint64
	longest  time.Duration
	gapStart time.Time
	started  chan struct{} // closed on the first datagram
}

func newGapMeter() *gapMeter { return &gapMeter{started: make(chan struct{})} }

func (g *gapMeter) datagram(_ int, seq uint64, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.received == 0 {
		g.first, g.last, g.firstSeq, g.maxSeq = at, at, seq, seq
		g.received = 1
		close(g.started)
		return
	}
	g.received++
	if seq <= g.maxSeq {
		g.reorder++
		return
	}
	if d := at.Sub(g.last); d > g.longest {
		g.longest, g.gapStart = d, g.last
	}
	g.maxSeq, g.last = seq, at
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
	r := gapReading{Longest: g.longest, Start: g.gapStart, Reordered: g.reorder, Received: g.received}
	if g.received == 0 {
		return r
	}
	expected := g.maxSeq - g.firstSeq + 1
	if expected > g.received {
		r.Lost = expected - g.received
	}
	every := time.Second / time.Duration(rate)
	if tail := end.Sub(g.last); tail > 2*every {
		if tail > r.Longest {
			r.Longest, r.Start, r.Open = tail, g.last, true
		}
		r.Lost += uint64(tail/every) - 1
	}
	return r
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

// gap is the silence lost datagrams made on the wire, assuming they went
// missing in one run starting with the first datagram sent at or after
// from (the outage began then): from the last datagram sent before the
// run to the first after it. Without a stalled sender that is lost times
// the interval; a sender that stalled during the outage (its next
// datagrams left late and in a burst) lengthens it as it lengthened the
// silence at the peer. end stands in for a run that lasted to the end.
func (l *sendLog) gap(lost uint64, from, end time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lost == 0 {
		return 0
	}
	first := len(l.at)
	for i, t := range l.at {
		if !t.Before(from) {
			first = i
			break
		}
	}
	if first == 0 {
		first = 1
	}
	before := l.at[first-1]
	after := end
	if k := first + int(lost); k < len(l.at) {
		after = l.at[k]
	}
	return after.Sub(before)
}
