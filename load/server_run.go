package load

import (
	"context"
	"fmt"
	"time"
)

// runStreams moves the data until the client's TEST_END, then exchanges
// the results. An open-ended test is cut at the server's maximum duration
// with SERVER_TERMINATE, which iperf3 clients report as the server ending.
func (t *serverTest) runStreams(ctx context.Context) error {
	stop := make(chan struct{})
	m := mover{
		block:    t.block,
		rate:     t.sendRate(),
		readRate: t.streamCap,
		udp64:    t.udp64,
		stop:     stop,
		sendBuf:  payload(t.block),
		recvSize: recvBuffer,
	}
	t.begin = time.Now()
	for _, st := range t.streams {
		go m.run(st)
	}
	if t.omit > 0 {
		t.omitted = make([]uint64, len(t.streams))
		time.AfterFunc(t.omit, func() {
			for i, st := range t.streams {
				t.omittedSet(i, st.bytes.Load())
			}
		})
	}

	limit := t.srv.maxDuration()
	if t.duration > 0 {
		// The client ends the test; this is for a client that does not.
		limit = min(limit, t.duration+t.omit+2*t.srv.stepTimeout())
	}
	msgs := make(chan ctrlMsg, 1)
	go func() {
		st, err := t.ctl.readState(limit)
		msgs <- ctrlMsg{st, err}
	}()
	var msg ctrlMsg
	idle := ""
	var overRate *refusal
	watch := time.NewTicker(max(min(t.srv.idleTimeout()/4, rateCheckEvery), 10*time.Millisecond))
	defer watch.Stop()
	// Idle is measured from the last whole block or datagram moved, not
	// the last byte: a client trickling a byte now and then must not hold
	// the server for the test's whole duration.
	unit := uint64(max(t.block, 1))
	lastMoved, lastUnits := time.Now(), uint64(0)
	rates := rateWindow{limit: t.streamCap * uint64(t.receivers()), slack: 2 * unit}
	rates.add(time.Now(), t.received()) // judged from the first check on
wait:
	for {
		select {
		case msg = <-msgs:
			break wait
		case <-ctx.Done():
			msg.st = stServerTerminate
			break wait
		case now := <-watch.C:
			total, alive := t.progress()
			switch {
			case alive == 0:
				idle = "the client closed every stream without ending the test"
			case total/unit != lastUnits:
				lastMoved, lastUnits = now, total/unit
			case now.Sub(lastMoved) >= t.srv.idleTimeout():
				idle = fmt.Sprintf("no data moved for %v", t.srv.idleTimeout())
			}
			if idle != "" {
				msg.st = stServerTerminate
				break wait
			}
			if over := rates.add(now, t.received()); over > 0 {
				overRate = &refusal{code: ieTotalRate, what: fmt.Sprintf("ended: the client sent %s, above this server's %s per test (--max-rate)",
					formatRate(over), formatRate(float64(t.srv.MaxRate)))}
				break wait
			}
		}
	}
	t.end = endStreams(t.streams, stop)
	t.running.Store(false)
	// The end message goes out before the streams close, so the client
	// reads why they closed.
	var ended error
	switch {
	case overRate != nil:
		ended = overRate
	case idle != "":
		ended = fmt.Errorf("ended: %s", idle)
	case msg.st == stServerTerminate && msg.err == nil:
		ended = fmt.Errorf("ended: the server is shutting down")
	case msg.err != nil && isTimeout(msg.err):
		ended = fmt.Errorf("ended after %v, the most this server allows (bondtop serve's maximum duration)", limit.Round(time.Second))
	}
	if overRate != nil {
		t.sendRefusal(overRate)
		// The streams stay open until the client has read why (it
		// closes the control connection), or a second: closed at once,
		// a sending client's next write fails first and hides the
		// reason.
		select {
		case <-msgs:
		case <-time.After(time.Second):
		}
	} else if ended != nil {
		t.ctl.writeState(stServerTerminate)
	}
	// As iperf3: the streams close at TEST_END, before the results, so a
	// receiving client sees their end.
	for _, st := range t.streams {
		if st.conn != nil {
			st.conn.Close()
		}
	}
	if t.udpConn != nil {
		t.udpConn.Close()
	}

	switch {
	case ended != nil:
		return ended
	case msg.err != nil:
		return wordCtrlErr("while the test ran", t.peer.String(), limit, msg.err)
	case msg.st == stClientTerminate:
		return fmt.Errorf("the client terminated the test")
	case msg.st != stTestEnd:
		return fmt.Errorf("the client sent %v while the test ran", msg.st)
	}
	return t.exchangeResults()
}

// progress is the bytes moved so far and the number of streams still
// moving them.
func (t *serverTest) progress() (total uint64, alive int) {
	for _, st := range t.streams {
		total += st.bytes.Load()
		select {
		case <-st.done:
		default:
			alive++
		}
	}
	return total, alive
}

// received is the bytes the server's receiving streams took so far.
func (t *serverTest) received() uint64 {
	var n uint64
	for _, st := range t.streams {
		if !st.sender {
			n += st.bytes.Load()
		}
	}
	return n
}

// receivers is the number of streams on which the server receives.
func (t *serverTest) receivers() int {
	if t.direction == Receive {
		return 0
	}
	return t.streamsN
}

// rateCheckEvery is how often a capped test's received bytes are
// checked, and rateWindowSpan how far back the check looks. Over a span
// shorter than the window (a test's first checks) rateBurst more at the
// cap is allowed: a test of one second is judged too, from its first
// check on, where a client that sends without pacing has sent the most.
const (
	rateCheckEvery = 250 * time.Millisecond
	rateWindowSpan = 2 * time.Second
	rateBurst      = 200 * time.Millisecond
)

// rateWindow tells whether what a test received over the last
// rateWindowSpan exceeds its cap (with a tenth, or rateBurst at the cap
// if more, and slack bytes of tolerance for bursts). A zero limit checks
// nothing.
type rateWindow struct {
	limit uint64 // bit/s
	slack uint64 // bytes
	at    []time.Time
	total []uint64
}

// add notes the received total at now and returns the rate in bit/s
// over the window when it is above the cap, 0 otherwise.
func (w *rateWindow) add(now time.Time, total uint64) float64 {
	if w.limit == 0 {
		return 0
	}
	w.at, w.total = append(w.at, now), append(w.total, total)
	// Drop samples while the next one still spans the window.
	for len(w.at) > 2 && now.Sub(w.at[1]) >= rateWindowSpan {
		w.at, w.total = w.at[1:], w.total[1:]
	}
	span := now.Sub(w.at[0])
	if span < rateCheckEvery {
		return 0
	}
	moved := total - w.total[0]
	allowed := float64(w.limit)/8*max(span.Seconds()*1.1, (span+rateBurst).Seconds()) + float64(w.slack)
	if float64(moved) <= allowed {
		return 0
	}
	return float64(moved) * 8 / span.Seconds()
}

func (t *serverTest) omittedSet(i int, v uint64) {
	t.mu.Lock()
	t.omitted[i] = v
	t.mu.Unlock()
}

func (t *serverTest) omittedGet(i int) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.omitted == nil {
		return 0
	}
	return t.omitted[i]
}

// exchangeResults is EXCHANGE_RESULTS, the client's results, ours,
// DISPLAY_RESULTS, and the client's IPERF_DONE.
func (t *serverTest) exchangeResults() error {
	if err := t.ctl.writeState(stExchangeResults); err != nil {
		return err
	}
	var theirs results
	if err := t.ctl.readJSON(&theirs); err != nil {
		return wordCtrlErr("reading the client's results", t.peer.String(), t.srv.stepTimeout(), err)
	}
	if err := t.ctl.writeJSON(t.results()); err != nil {
		return wordCtrlErr("sending our results", t.peer.String(), t.srv.stepTimeout(), err)
	}
	t.finishing.Store(true)
	if err := t.ctl.writeState(stDisplayResults); err != nil {
		return err
	}
	// IPERF_DONE, or the client just closing: both end the test well.
	t.ctl.readState(0)
	t.srv.logf("test from %s: %s", t.peer, t.describe())
	return nil
}

func (t *serverTest) results() results {
	r := results{SenderHasRetransmits: -1}
	if t.direction != Send {
		r.SenderHasRetransmits = 0
		if !t.udp && hasTCPInfo {
			r.SenderHasRetransmits = 1
		}
	}
	for i, st := range t.streams {
		sr := localResult(st, t.begin, t.end)
		sr.Bytes -= num(t.omittedGet(i))
		r.Streams = append(r.Streams, sr)
	}
	return r
}

// describe is a test in one log line: what the server moved.
func (t *serverTest) describe() string {
	var sent, rcvd uint64
	for _, st := range t.streams {
		if st.sender {
			sent += st.bytes.Load()
		} else {
			rcvd += st.bytes.Load()
		}
	}
	d := t.end.Sub(t.begin)
	proto := "tcp"
	if t.udp {
		proto = "udp"
	}
	s := fmt.Sprintf("%s, %d streams, %.1fs", proto, t.streamsN, d.Seconds())
	if rcvd > 0 {
		s += fmt.Sprintf(", received %s", formatRate(bitsPerSecond(rcvd, d)))
	}
	if sent > 0 {
		s += fmt.Sprintf(", sent %s", formatRate(bitsPerSecond(sent, d)))
	}
	return s
}

// formatRate is bit/s with an SI prefix, as iperf3 prints them.
func formatRate(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.2f Gbit/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.2f Mbit/s", bps/1e6)
	case bps >= 1e3:
		return fmt.Sprintf("%.2f Kbit/s", bps/1e3)
	}
	return fmt.Sprintf("%.0f bit/s", bps)
}
