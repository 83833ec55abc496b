package load

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrBusy is the server's ACCESS_DENIED: it runs one test at a time.
var ErrBusy = errors.New("the server is busy running another test (iperf3 servers run one at a time): try again when it ends")

// ErrStopped means the test was stopped before its streams ran: nothing
// was measured.
var ErrStopped = errors.New("stopped before the test started")

// clientVersion is what bondtop tells a server it is.
const clientVersion = "bondtop (iperf3 3.12 protocol)"

// Test is a running client test. Its methods are safe from any goroutine
// and none of them waits on the network, except Wait.
type Test struct {
	cfg       Config
	intervals chan Interval
	done      chan struct{}
	stop      chan struct{}
	stopOnce  sync.Once
	phase     atomic.Int32

	mu      sync.Mutex
	streams []StreamInfo
	summary Summary
	err     error
}

// Start validates cfg and runs the test in the background: it returns at
// once. The test ends after its duration, on Stop, or when ctx is done;
// each of those ends it cleanly (TEST_END, results, IPERF_DONE).
func Start(ctx context.Context, cfg Config) (*Test, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &Test{
		cfg:       c,
		intervals: make(chan Interval, 16),
		done:      make(chan struct{}),
		stop:      make(chan struct{}),
	}
	go t.run(ctx)
	return t, nil
}

// Intervals delivers the live statistics, one value per interval, and is
// closed when the test is done. The engine never waits for a reader: when
// 16 intervals are waiting, the oldest is dropped.
func (t *Test) Intervals() <-chan Interval { return t.intervals }

// Stop ends the test early and cleanly; it does not wait (see Done).
func (t *Test) Stop() { t.stopOnce.Do(func() { close(t.stop) }) }

// Done is closed when the test has ended and Result is final.
func (t *Test) Done() <-chan struct{} { return t.done }

// Phase is how far the test has come.
func (t *Test) Phase() Phase { return Phase(t.phase.Load()) }

// Streams describes the connected streams (none before they connect).
func (t *Test) Streams() []StreamInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]StreamInfo(nil), t.streams...)
}

// Result is the summary and the error of a finished test; before Done it
// is the zero Summary and nil.
func (t *Test) Result() (Summary, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.summary, t.err
}

// Wait waits for the test to end and returns its result.
func (t *Test) Wait() (Summary, error) {
	<-t.done
	return t.Result()
}

func (t *Test) stopRequested(ctx context.Context) bool {
	select {
	case <-t.stop:
		return true
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

func (t *Test) run(ctx context.Context) {
	s := &session{cfg: t.cfg, test: t}
	sum, err := s.run(ctx)
	t.mu.Lock()
	t.summary, t.err = sum, err
	t.mu.Unlock()
	t.phase.Store(int32(Done))
	close(t.intervals)
	close(t.done)
}

// publish hands an interval over without ever waiting: when the reader
// lags, the oldest waiting interval makes room.
func (t *Test) publish(iv Interval) {
	for {
		select {
		case t.intervals <- iv:
			return
		default:
		}
		select {
		case <-t.intervals:
		default:
		}
	}
}

// session is one client test's state, owned by Test.run's goroutine.
type session struct {
	cfg     Config
	test    *Test
	addr    netip.Addr
	ctl     *ctrl
	cookie  [cookieSize]byte
	streams []*stream
	begin   time.Time // TEST_RUNNING
	end     time.Time // senders stopped
	stopped bool
	smp     *sampler
}

func (s *session) run(ctx context.Context) (Summary, error) {
	addr, err := resolve(ctx, s.cfg.Target, s.cfg.Source)
	if err != nil {
		return Summary{}, err
	}
	s.addr = addr
	defer s.closeAll()
	if err := s.connect(ctx); err != nil {
		return Summary{}, err
	}
	if err := s.setup(ctx); err != nil {
		return Summary{}, err
	}
	if err := s.running(ctx); err != nil {
		return Summary{}, err
	}
	peer, err := s.finish()
	if err != nil {
		return Summary{}, err
	}
	sum := s.summarize(peer)
	for _, st := range s.streams {
		if st.err != nil {
			return sum, fmt.Errorf("stream %d: %w", st.id, st.err)
		}
	}
	return sum, nil
}

// resolve turns the target into the one address all traffic goes to.
func resolve(ctx context.Context, target string, src netip.Addr) (netip.Addr, error) {
	if a, err := netip.ParseAddr(target); err == nil {
		return a.Unmap().WithZone(a.Zone()), nil
	}
	rctx, cancel := context.WithTimeout(ctx, DefaultStepTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(rctx, "ip", target)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("resolving %s: %w (give an IP address instead?)", target, err)
	}
	for _, a := range addrs {
		a = a.Unmap()
		// With a source address, the target must be of its family.
		if !src.IsValid() || a.Is4() == src.Is4() {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("%s has no address of the source address %s's family", target, src)
}

func (s *session) closeAll() {
	for _, st := range s.streams {
		if st.conn != nil {
			st.conn.Close()
		}
	}
	if s.ctl != nil {
		s.ctl.c.Close()
	}
}

// dialer binds the source address and, when port is not 0, the port.
func (s *session) dialer(port uint16) *net.Dialer {
	d := &net.Dialer{Timeout: s.cfg.StepTimeout}
	if s.cfg.Source.IsValid() || port != 0 {
		ip := net.IP(nil)
		if s.cfg.Source.IsValid() {
			ip = s.cfg.Source.AsSlice()
		}
		if s.cfg.Protocol == UDP {
			d.LocalAddr = &net.UDPAddr{IP: ip, Port: int(port), Zone: s.cfg.Source.Zone()}
		} else {
			d.LocalAddr = &net.TCPAddr{IP: ip, Port: int(port), Zone: s.cfg.Source.Zone()}
		}
	}
	return d
}

func (s *session) target() string {
	return netip.AddrPortFrom(s.addr, s.cfg.Port).String()
}

// connect opens the control connection and sends the cookie.
func (s *session) connect(ctx context.Context) error {
	d := &net.Dialer{Timeout: s.cfg.StepTimeout, KeepAlive: s.cfg.ControlKeepAlive}
	if s.cfg.Source.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: s.cfg.Source.AsSlice(), Zone: s.cfg.Source.Zone()}
	}
	c, err := d.DialContext(ctx, "tcp", s.target())
	if err != nil {
		return fmt.Errorf("connecting to %s: %w (is `iperf3 -s` or `bondtop serve` running there, and the port open?)", s.target(), err)
	}
	s.ctl = &ctrl{c: c, timeout: s.cfg.StepTimeout, maxJSON: maxJSONClient}
	s.cookie = newCookie()
	s.ctl.deadline(0)
	if _, err := c.Write(s.cookie[:]); err != nil {
		return fmt.Errorf("sending the cookie to %s: %w", s.target(), err)
	}
	return nil
}

// setup answers the server's states until TEST_RUNNING. A Stop meanwhile
// sends CLIENT_TERMINATE, as iperf3 does on ^C.
func (s *session) setup(ctx context.Context) error {
	watch := make(chan struct{})
	defer close(watch)
	go func() {
		select {
		case <-s.test.stop:
		case <-ctx.Done():
		case <-watch:
			return
		}
		s.ctl.c.SetReadDeadline(time.Now())
	}()
	for {
		st, err := s.ctl.readState(0)
		if err != nil {
			if s.test.stopRequested(ctx) {
				s.ctl.c.SetDeadline(time.Now().Add(time.Second))
				s.ctl.c.Write([]byte{byte(stClientTerminate)})
				return ErrStopped
			}
			return s.ctrlErr("waiting for the server", err)
		}
		switch st {
		case stParamExchange:
			if err := s.ctl.writeJSON(s.params()); err != nil {
				return s.ctrlErr("sending the parameters", err)
			}
		case stCreateStreams:
			if err := s.createStreams(ctx); err != nil {
				return err
			}
		case stTestStart:
		case stTestRunning:
			return nil
		default:
			return s.stateErr(st)
		}
	}
}

// ctrlErr words a failed control step.
func (s *session) ctrlErr(step string, err error) error {
	return wordCtrlErr(step, s.target(), s.cfg.StepTimeout, err)
}

func wordCtrlErr(step, peer string, timeout time.Duration, err error) error {
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		return fmt.Errorf("%s: %s closed the control connection", step, peer)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%s: no answer from %s within %v", step, peer, timeout)
	}
	return fmt.Errorf("%s: %s: %w", step, peer, err)
}

// stateErr says what an unexpected or failing state from the server means.
func (s *session) stateErr(st state) error {
	switch st {
	case stAccessDenied:
		return fmt.Errorf("%s: %w", s.target(), ErrBusy)
	case stServerError:
		var b [8]byte
		s.ctl.deadline(0)
		if _, err := io.ReadFull(s.ctl.c, b[:]); err != nil {
			return fmt.Errorf("%s reported an error and closed before saying which", s.target())
		}
		return &ServerError{Code: int32(binary.BigEndian.Uint32(b[0:])), Errno: int32(binary.BigEndian.Uint32(b[4:]))}
	case stServerTerminate:
		return fmt.Errorf("%s terminated the test (the server was stopped, or reached its maximum duration)", s.target())
	}
	return fmt.Errorf("%s sent %v out of turn: not an iperf3 3.x server?", s.target(), st)
}

func (s *session) params() params {
	p := params{
		TCP:           s.cfg.Protocol == TCP,
		UDP:           s.cfg.Protocol == UDP,
		Time:          int(s.cfg.Duration / time.Second),
		Parallel:      s.cfg.Streams,
		Reverse:       s.cfg.Direction == Receive,
		Bidirectional: s.cfg.Direction == Bidirectional,
		Len:           s.cfg.BlockSize,
		Bandwidth:     s.cfg.Rate,
		ClientVersion: clientVersion,
	}
	if s.cfg.UntilStopped {
		p.Time = 0
	}
	if p.Len == 0 && s.cfg.Protocol == UDP {
		p.Len = s.udpBlock()
	}
	return p
}

// udpBlock is the datagram size: asked for, else the control
// connection's MSS (as iperf3: no IP fragments), else 1460.
func (s *session) udpBlock() int {
	if s.cfg.BlockSize != 0 {
		return s.cfg.BlockSize
	}
	if mss := tcpMSS(s.ctl.c); mss >= udpHeaderSize64 {
		return mss
	}
	return defaultUDPBlock
}

// createStreams connects the streams in iperf3's order: the ones this host
// sends on first.
func (s *session) createStreams(ctx context.Context) error {
	n := s.cfg.Streams
	var senders []bool
	switch s.cfg.Direction {
	case Send:
		senders = repeat(true, n)
	case Receive:
		senders = repeat(false, n)
	default:
		senders = append(repeat(true, n), repeat(false, n)...)
	}
	for i, sender := range senders {
		id := 1
		if i > 0 {
			id = i + 2
		}
		st := newStream(id, sender, s.cfg.Protocol == UDP)
		st.onDatagram, st.onSend = s.cfg.OnDatagram, s.cfg.OnSend
		var err error
		if st.udp {
			err = s.connectUDP(ctx, st, i)
		} else {
			err = s.connectTCP(ctx, st, i)
		}
		if err != nil {
			return err
		}
		s.streams = append(s.streams, st)
	}
	infos := make([]StreamInfo, len(s.streams))
	for i, st := range s.streams {
		infos[i] = st.info
	}
	s.test.mu.Lock()
	s.test.streams = infos
	s.test.mu.Unlock()
	return nil
}

func repeat(v bool, n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = v
	}
	return b
}

// candidates are the source ports to try for the i-th stream; a single 0
// lets the kernel pick.
func (s *session) candidates(i int) ([]uint16, string) {
	slave := ""
	if i < len(s.cfg.PredictedSlaves) {
		slave = s.cfg.PredictedSlaves[i]
	}
	switch {
	case i < len(s.cfg.SourcePorts) && len(s.cfg.SourcePorts[i]) > 0:
		return s.cfg.SourcePorts[i], slave
	case s.cfg.FirstPort != 0:
		return []uint16{s.cfg.FirstPort + uint16(i)}, slave
	}
	return []uint16{0}, slave
}

// dialStream dials with each candidate port until one binds: a planned
// port may be taken, or in TIME_WAIT towards this very server.
func (s *session) dialStream(ctx context.Context, network string, i int) (net.Conn, string, error) {
	ports, slave := s.candidates(i)
	var last error
	for _, p := range ports {
		c, err := s.dialer(p).DialContext(ctx, network, s.target())
		if err == nil {
			return c, slave, nil
		}
		last = err
		if p == 0 || !isAddrBusy(err) {
			break
		}
	}
	if len(ports) > 1 {
		return nil, "", fmt.Errorf("stream %d: none of the %d source ports planned for it could be used: %w", i+1, len(ports), last)
	}
	return nil, "", fmt.Errorf("stream %d: connecting to %s: %w", i+1, s.target(), last)
}

func (s *session) connectTCP(ctx context.Context, st *stream, i int) error {
	c, slave, err := s.dialStream(ctx, "tcp", i)
	if err != nil {
		return err
	}
	st.conn = c
	c.SetDeadline(time.Now().Add(s.cfg.StepTimeout))
	if _, err := c.Write(s.cookie[:]); err != nil {
		return fmt.Errorf("stream %d: sending the cookie: %w", st.id, err)
	}
	c.SetDeadline(time.Time{})
	st.info = StreamInfo{ID: st.id, Sender: st.sender, SourcePort: localPort(c), PredictedSlave: slave}
	return nil
}

// connectUDP "connects" a UDP stream as iperf3 does: a datagram to the
// server's port, answered by the server once it has tied a socket to ours.
func (s *session) connectUDP(ctx context.Context, st *stream, i int) error {
	c, slave, err := s.dialStream(ctx, "udp", i)
	if err != nil {
		return err
	}
	st.conn = c
	if uc, ok := c.(*net.UDPConn); ok {
		// Room for bursts at high rates; the kernel caps it at rmem_max.
		uc.SetReadBuffer(4 << 20)
		uc.SetWriteBuffer(4 << 20)
	}
	c.SetDeadline(time.Now().Add(s.cfg.StepTimeout))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte(udpConnectMsg)); err != nil {
		return fmt.Errorf("stream %d: UDP hello to %s: %w", st.id, s.target(), err)
	}
	// In reverse mode, data of the server's earlier streams may come
	// first; a few datagrams are skipped, as iperf3 does.
	buf := make([]byte, maxUDPBlock+64)
	for tries := 0; tries < 64; tries++ {
		n, err := c.Read(buf)
		if err != nil {
			return fmt.Errorf("stream %d: no UDP answer from %s (%w): is UDP port %d blocked by a firewall?", st.id, s.target(), err, s.cfg.Port)
		}
		if n == 4 && (string(buf[:4]) == udpConnectReply || string(buf[:4]) == udpLegacyReply) {
			st.info = StreamInfo{ID: st.id, Sender: st.sender, SourcePort: localPort(c), PredictedSlave: slave}
			return nil
		}
	}
	return fmt.Errorf("stream %d: %s did not answer the UDP hello", st.id, s.target())
}

func localPort(c net.Conn) uint16 {
	if ap, err := netip.ParseAddrPort(c.LocalAddr().String()); err == nil {
		return ap.Port()
	}
	return 0
}
