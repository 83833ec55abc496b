package load

import "time"

// sampler turns the streams' running counters into per-interval deltas.
type sampler struct {
	streams []*stream
	begin   time.Time
	last    time.Time
	prev    []counts
}

// counts are a stream's cumulative counters at one instant.
type counts struct {
	bytes   uint64
	retrans uint64
	packets uint64
	lost    int64
}

func newSampler(streams []*stream, begin time.Time) *sampler {
	return &sampler{streams: streams, begin: begin, last: begin, prev: make([]counts, len(streams))}
}

// loop samples every interval until stop is closed.
func (p *sampler) loop(every time.Duration, stop <-chan struct{}, publish func(Interval)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			p.sample(now, publish, false)
		case <-stop:
			return
		}
	}
}

// sample publishes the interval since the last sample. The final one
// (final set) may be short, right after a tick; it still carries the last
// bytes, so the intervals add up to the summary.
func (p *sampler) sample(now time.Time, publish func(Interval), final bool) {
	d := now.Sub(p.last)
	if d <= 0 || !final && d < 10*time.Millisecond {
		return
	}
	iv := Interval{Start: p.last.Sub(p.begin), End: now.Sub(p.begin), Streams: make([]StreamStats, len(p.streams))}
	iv.Sent.Retransmits, iv.Received.Retransmits = -1, -1
	for i, st := range p.streams {
		cur := counts{bytes: st.bytes.Load()}
		ss := StreamStats{StreamInfo: st.info, Retransmits: -1}
		if st.sender && !st.udp {
			if rt, rtt, ok := tcpInfo(st.conn); ok {
				cur.retrans = rt
				ss.Retransmits = int64(rt - min(p.prev[i].retrans, rt))
				ss.RTT = rtt
			}
		}
		if st.udp {
			var jitter float64
			cur.packets, cur.lost, jitter = st.udpCounts()
			ss.Packets = cur.packets - min(p.prev[i].packets, cur.packets)
			if !st.sender {
				ss.Lost = cur.lost - p.prev[i].lost
				ss.Jitter = time.Duration(jitter * float64(time.Second))
			}
		}
		ss.Bytes = cur.bytes - p.prev[i].bytes
		ss.BitsPerSecond = bitsPerSecond(ss.Bytes, d)
		p.prev[i] = cur
		iv.Streams[i] = ss
		sum := &iv.Received
		if st.sender {
			sum = &iv.Sent
		}
		sum.Bytes += ss.Bytes
		if ss.Retransmits >= 0 {
			sum.Retransmits = max(sum.Retransmits, 0) + ss.Retransmits
		}
		sum.RTT = max(sum.RTT, ss.RTT)
		sum.Packets += ss.Packets
		sum.Lost += ss.Lost
		sum.Jitter = max(sum.Jitter, ss.Jitter)
	}
	iv.Sent.BitsPerSecond = bitsPerSecond(iv.Sent.Bytes, d)
	iv.Received.BitsPerSecond = bitsPerSecond(iv.Received.Bytes, d)
	p.last = now
	publish(iv)
}
