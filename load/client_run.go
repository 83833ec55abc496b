package load

import (
	"context"
	"time"
)

// endGrace is how long receivers may drain after the server ended, and
// stopped senders may take to return.
const endGrace = 2 * time.Second

// ctrlMsg is one state byte read while the streams run.
type ctrlMsg struct {
	st  state
	err error
}

// running moves the data until the duration ends, Stop, the context, or
// the server interrupts; then it stops this host's senders and sends
// TEST_END, so the server stops its own and reports.
func (s *session) running(ctx context.Context) error {
	s.test.phase.Store(int32(Running))
	s.begin = time.Now()
	stopSend := make(chan struct{})
	m := mover{
		block:    s.cfg.BlockSize,
		rate:     s.cfg.Rate,
		stop:     stopSend,
		sendBuf:  payload(max(s.cfg.BlockSize, s.udpBlockOr())),
		recvSize: recvBuffer,
	}
	if s.cfg.Protocol == UDP {
		m.block = s.udpBlock()
	}
	for _, st := range s.streams {
		go m.run(st)
	}
	smp := newSampler(s.streams, s.begin)
	s.smp = smp
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		smp.loop(s.cfg.Interval, stopSend, s.test.publish)
	}()

	// One state byte may come while the data moves: the server ending the
	// test (SERVER_TERMINATE, an error) or, after TEST_END, its answer.
	msgs := make(chan ctrlMsg, 1)
	go func() {
		st, err := s.ctl.readState(s.cfg.Duration + 2*s.cfg.StepTimeout)
		msgs <- ctrlMsg{st, err}
	}()

	timer := time.NewTimer(s.cfg.Duration)
	defer timer.Stop()
	var early *ctrlMsg
	var failed <-chan struct{} = firstFailure(s.streams)
	select {
	case <-timer.C:
	case <-s.test.stop:
		s.stopped = true
	case <-ctx.Done():
		s.stopped = true
	case <-failed:
	case msg := <-msgs:
		early = &msg
	}

	// Stop the senders before TEST_END, so every byte counted was written
	// before the server stops counting.
	s.end = endStreams(s.streams, stopSend)
	<-samplerDone
	s.test.phase.Store(int32(Ending))

	if early != nil {
		if early.err != nil {
			return s.ctrlErr("while the test ran", early.err)
		}
		if early.st != stExchangeResults {
			return s.stateErr(early.st)
		}
		// A server that ends by itself (its own duration) asks for
		// results without a TEST_END.
		return nil
	}
	if err := s.ctl.writeState(stTestEnd); err != nil {
		return s.ctrlErr("ending the test", err)
	}
	s.ctl.c.SetReadDeadline(time.Now().Add(s.cfg.StepTimeout))
	msg := <-msgs
	if msg.err != nil {
		return s.ctrlErr("waiting for the results", msg.err)
	}
	if msg.st != stExchangeResults {
		return s.stateErr(msg.st)
	}
	return nil
}

// udpBlockOr is the UDP datagram size for UDP tests, 0 for TCP.
func (s *session) udpBlockOr() int {
	if s.cfg.Protocol == UDP {
		return s.udpBlock()
	}
	return 0
}

// payload is a send buffer of n bytes that does not compress to nothing
// (some paths compress or deduplicate).
func payload(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// firstFailure is closed when a sending stream stops by an error: the
// test cannot measure what it was asked to.
func firstFailure(streams []*stream) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for _, st := range streams {
			if st.sender {
				<-st.done
				if st.err != nil {
					close(ch)
					return
				}
			}
		}
	}()
	return ch
}

func waitSenders(streams []*stream, d time.Duration) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for _, st := range streams {
		if !st.sender {
			continue
		}
		select {
		case <-st.done:
		case <-deadline.C:
			return
		}
	}
}

// finish exchanges the results and says goodbye: EXCHANGE_RESULTS was
// read; the receivers drain what the server still sent.
func (s *session) finish() (*results, error) {
	var drain time.Duration = endGrace
	if s.cfg.Protocol == UDP {
		// UDP has no end of stream: what is not here soon is lost.
		drain = 100 * time.Millisecond
	}
	deadline := time.Now().Add(drain)
	for _, st := range s.streams {
		if st.sender {
			continue
		}
		select {
		case <-st.done:
		case <-time.After(time.Until(deadline)):
			st.conn.SetReadDeadline(time.Now())
			<-st.done
		}
	}
	// The last interval, with what the receivers drained after the end.
	s.smp.sample(time.Now(), s.test.publish, true)
	if err := s.ctl.writeJSON(s.ourResults()); err != nil {
		return nil, s.ctrlErr("sending our results", err)
	}
	var peer results
	if err := s.ctl.readJSON(&peer); err != nil {
		return nil, s.ctrlErr("reading the server's results", err)
	}
	st, err := s.ctl.readState(0)
	if err != nil {
		return nil, s.ctrlErr("waiting for DISPLAY_RESULTS", err)
	}
	if st != stDisplayResults {
		return nil, s.stateErr(st)
	}
	for _, st := range s.streams {
		st.conn.Close()
	}
	// IPERF_DONE tells the server it may take the next test; a server
	// that already hung up does not make the test fail.
	if s.ctl.writeState(stIperfDone) == nil {
		// iperf3 takes the next test only once it has closed this one:
		// waiting for that lets a next test follow at once.
		s.ctl.c.SetReadDeadline(time.Now().Add(time.Second))
		var b [64]byte
		for {
			if _, err := s.ctl.c.Read(b[:]); err != nil {
				break
			}
		}
	}
	return &peer, nil
}

// ourResults is this host's side of EXCHANGE_RESULTS.
func (s *session) ourResults() results {
	r := results{SenderHasRetransmits: -1}
	if s.cfg.Direction != Receive {
		r.SenderHasRetransmits = 0
		if s.cfg.Protocol == TCP && hasTCPInfo {
			r.SenderHasRetransmits = 1
		}
	}
	for _, st := range s.streams {
		r.Streams = append(r.Streams, localResult(st, s.begin, s.end))
	}
	return r
}

// localResult is one stream as this side measured it.
func localResult(st *stream, begin, end time.Time) streamResult {
	sr := streamResult{
		ID:          num(st.id),
		Bytes:       num(st.bytes.Load()),
		Retransmits: -1,
		EndTime:     num(end.Sub(begin).Seconds()),
	}
	if st.sender && !st.udp {
		sr.Retransmits = num(st.retrans)
	}
	if st.udp {
		packets, lost, jitter := st.udpCounts()
		sr.Packets = num(packets)
		if !st.sender {
			sr.Errors = num(lost)
			sr.Jitter = num(jitter)
		}
	}
	return sr
}

// summarize joins this host's counts and the server's per stream.
func (s *session) summarize(peer *results) Summary {
	byID := make(map[int64]*streamResult, len(peer.Streams))
	for i := range peer.Streams {
		byID[peer.Streams[i].ID.int64()] = &peer.Streams[i]
	}
	sum := Summary{
		Protocol:  s.cfg.Protocol,
		Direction: s.cfg.Direction,
		Duration:  s.end.Sub(s.begin),
		Stopped:   s.stopped,
	}
	for _, st := range s.streams {
		mine := localResult(st, s.begin, s.end)
		theirs := byID[int64(st.id)]
		if theirs == nil {
			theirs = &streamResult{Retransmits: -1}
		}
		ss := joinResults(st.info, &mine, theirs, sum.Duration)
		sum.Streams = append(sum.Streams, ss)
		if st.sender {
			addSummary(&sum.Sent, &ss)
		} else {
			addSummary(&sum.Received, &ss)
		}
	}
	sum.Sent.BitsPerSecond = bitsPerSecond(sum.Sent.ReceivedBytes, sum.Duration)
	sum.Received.BitsPerSecond = bitsPerSecond(sum.Received.ReceivedBytes, sum.Duration)
	return sum
}

// joinResults makes one stream's summary from the sender's and the
// receiver's results.
func joinResults(info StreamInfo, mine, theirs *streamResult, d time.Duration) StreamSummary {
	snd, rcv := theirs, mine
	if info.Sender {
		snd, rcv = mine, theirs
	}
	ss := StreamSummary{
		StreamInfo:    info,
		SentBytes:     uint64(max(snd.Bytes.int64(), 0)),
		ReceivedBytes: uint64(max(rcv.Bytes.int64(), 0)),
		Retransmits:   snd.Retransmits.int64(),
		Packets:       uint64(max(snd.Packets.int64(), 0)),
		Lost:          max(rcv.Errors.int64(), 0),
		Jitter:        time.Duration(float64(rcv.Jitter) * float64(time.Second)),
	}
	ss.BitsPerSecond = bitsPerSecond(ss.ReceivedBytes, d)
	return ss
}

func addSummary(dst, ss *StreamSummary) {
	dst.SentBytes += ss.SentBytes
	dst.ReceivedBytes += ss.ReceivedBytes
	if ss.Retransmits >= 0 {
		dst.Retransmits = max(dst.Retransmits, 0) + ss.Retransmits
	} else if dst.Retransmits == 0 {
		dst.Retransmits = -1
	}
	dst.Packets += ss.Packets
	dst.Lost += ss.Lost
	dst.Jitter = max(dst.Jitter, ss.Jitter)
}
