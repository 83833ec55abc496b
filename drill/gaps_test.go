package drill

import (
	"testing"
	"time"
)

// A stream at 1000/s that stops for 250 ms, reorders one datagram, and
// loses 3 more: the gap, the loss and the reordering come out as sent.
func TestGapMeter(t *testing.T) {
	g := newGapMeter()
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for i := 1; i <= 100; i++ {
		g.datagram(1, uint64(i), ms(i))
	}
	// 101..349 lost: silence from 100 ms to 350 ms.
	for i := 350; i <= 400; i++ {
		if i == 360 {
			continue
		}
		g.datagram(1, uint64(i), ms(i))
	}
	g.datagram(1, 360, ms(401)) // late
	for _, i := range []int{405, 406} {
		g.datagram(1, uint64(i), ms(i)) // 401..404 lost
	}
	r := g.read(ms(407), 1000)
	if r.Longest != 250*time.Millisecond || !r.Start.Equal(ms(100)) || r.Open {
		t.Errorf("gap %v from %v open %v, want 250ms from 100ms", r.Longest, r.Start.Sub(t0), r.Open)
	}
	if r.Lost != 249+4 || r.Reordered != 1 {
		t.Errorf("lost %d reordered %d, want 253 and 1", r.Lost, r.Reordered)
	}

	// The stream never came back: the silence runs to the end.
	r = g.read(ms(3406), 1000)
	if r.Longest != 3000*time.Millisecond || !r.Open || r.Lost != 253+2999 {
		t.Errorf("open gap %v open %v lost %d", r.Longest, r.Open, r.Lost)
	}

	if r := newGapMeter().read(ms(10), 1000); r.Received != 0 || r.Longest != 0 {
		t.Errorf("nothing received: %+v", r)
	}
}

// The run of lost datagrams starts at the outage: without a stall the gap
// is the lost datagrams' time; a sender stalled for 300 ms in the outage
// lengthens it by the stall, and so does a stall without a loss.
func TestSendLogGap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	var l sendLog
	for i := 1; i <= 1000; i++ {
		l.sent(1, uint64(i), ms(i))
	}
	from, end := ms(0), ms(1001)
	if g := l.gap(100, ms(500), from, end); g != 101*time.Millisecond {
		t.Errorf("100 lost from 500 ms: %v, want 101ms (the last before to the first after)", g)
	}
	if g := l.gap(0, ms(500), from, end); g != time.Millisecond {
		t.Errorf("none lost: %v, want the 1ms between datagrams", g)
	}
	if g := l.gap(600, ms(500), from, end); g != 502*time.Millisecond {
		t.Errorf("lost to the end: %v, want 502ms", g)
	}
	var s sendLog
	seq := uint64(0)
	for i := 1; i <= 1000; i++ {
		at := ms(i)
		if i > 520 && i < 820 {
			continue // stalled
		}
		if i >= 820 && i < 1120 {
			at = ms(820) // the burst that catches up
		}
		seq++
		s.sent(1, seq, at)
	}
	// 50 datagrams lost from 500 ms: 500..549 by sequence, sent 500-520
	// and in the burst at 820.
	if g := s.gap(50, ms(500), from, ms(2000)); g != 321*time.Millisecond {
		t.Errorf("stalled sender: %v, want 321ms", g)
	}
	// Nothing lost: the stall alone, 520 to 820.
	if g := s.gap(0, ms(500), from, ms(2000)); g != 300*time.Millisecond {
		t.Errorf("stalled sender, nothing lost: %v, want 300ms", g)
	}
	// A stall outside the window does not count.
	if g := s.gap(0, ms(500), ms(100), ms(400)); g != time.Millisecond {
		t.Errorf("stall outside the window: %v", g)
	}
}

// Two phases on one stream (--direction rx): the stream stops at 500 ms,
// the first phase is handed over at 3500 ms, the stream comes back at
// 3530 ms. The first phase's silence runs open to the hand-over; the
// second's counts from the hand-over; the datagrams lost are split
// between them without counting any twice; a late datagram of the first
// phase is only reordered in the second.
func TestGapMeterHandOver(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	first := newGapMeter()
	for i := 1; i <= 500; i++ {
		first.datagram(1, uint64(i), ms(i))
	}
	r1, second := first.handOver(ms(3500), 1000)
	if r1.Longest != 3000*time.Millisecond || !r1.Open || r1.Lost != 2999 {
		t.Errorf("first phase: gap %v open %v lost %d, want 3s open, 2999 lost", r1.Longest, r1.Open, r1.Lost)
	}
	// What reaches the first meter after the hand-over is the second's.
	first.datagram(1, 3530, ms(3530))
	for i := 3531; i <= 3600; i++ {
		second.datagram(1, uint64(i), ms(i))
	}
	second.datagram(1, 400, ms(3600))
	r2 := second.read(ms(3601), 1000)
	if r2.Longest != 30*time.Millisecond || !r2.Start.Equal(ms(3500)) || r2.Open {
		t.Errorf("second phase: gap %v from %v open %v, want 30ms from the hand-over", r2.Longest, r2.Start.Sub(t0), r2.Open)
	}
	if r1.Lost+r2.Lost != 3029 || r2.Reordered != 1 || r2.Received != 72 {
		t.Errorf("lost %d+%d (want 3029 in all), reordered %d, received %d", r1.Lost, r2.Lost, r2.Reordered, r2.Received)
	}

	// A phase handed over before anything arrived: the next one's silence
	// still counts from the hand-over, its loss from its first datagram.
	_, next := newGapMeter().handOver(ms(0), 1000)
	if r := next.read(ms(2000), 1000); r.Longest != 2*time.Second || !r.Open {
		t.Errorf("silent next phase: %+v, want an open 2 s gap", r)
	}
	next.datagram(1, 7, ms(2500))
	next.datagram(1, 9, ms(2502))
	if r := next.read(ms(2503), 1000); r.Longest != 2500*time.Millisecond || r.Lost != 1 || r.Open {
		t.Errorf("next phase: %+v, want a 2.5 s gap, 1 lost", r)
	}
}
