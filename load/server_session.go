package load

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// serverTest is one test on the server side, run by the goroutine of its
// control connection.
type serverTest struct {
	srv   *Server
	ctl   *ctrl
	peer  net.Addr
	local net.Addr
	// peerAddr is the control connection's source address: data streams
	// and UDP hellos from any other address are not this test's, so a
	// test never sends to a host that did not ask for it.
	peerAddr netip.Addr
	cookie   [cookieSize]byte

	// Parameters from the client.
	udp       bool
	udp64     bool
	streamsN  int
	duration  time.Duration // 0: until TEST_END
	omit      time.Duration
	direction Direction // the client's point of view
	block     int
	rate      uint64
	// streamCap is the server's --max-rate share of each stream in bit/s
	// (0: no cap): what it sends and reads on it is paced at most there.
	streamCap uint64
	// refused is set once a SERVER_ERROR went out, so it goes once.
	refused bool

	// incoming receives data connections while CREATE_STREAMS lasts.
	mu        sync.Mutex
	accepting bool
	incoming  chan *stream
	udpConn   *net.UDPConn
	byPeer    map[netip.AddrPort]*stream
	running   atomic.Bool
	// finishing is set once the results are on their way to the
	// client, and gone closed once the server is free of the test.
	finishing atomic.Bool
	gone      chan struct{}
	// paramsIn is closed once the client's parameters were read and
	// accepted: until then the test may be a silent client's (or one
	// about to be refused), which a new client waits out (the hello
	// timeout) rather than be told the server is busy.
	paramsIn chan struct{}

	streams []*stream
	omitted []uint64 // bytes counted before the omit period ended
	begin   time.Time
	end     time.Time
}

func newServerTest(srv *Server, c net.Conn, cookie [cookieSize]byte, local net.Addr) *serverTest {
	return &serverTest{
		srv:      srv,
		ctl:      &ctrl{c: c, timeout: srv.stepTimeout(), maxJSON: maxJSONServer},
		peer:     c.RemoteAddr(),
		peerAddr: remoteAddr(c),
		local:    local,
		cookie:   cookie,
		incoming: make(chan *stream, 2*MaxStreams),
		gone:     make(chan struct{}),
		paramsIn: make(chan struct{}),
	}
}

// hasParams says whether the client's parameters were read.
func (t *serverTest) hasParams() bool {
	select {
	case <-t.paramsIn:
		return true
	default:
		return false
	}
}

// offerStream hands a TCP data connection that sent this test's cookie
// to the test; it says why not when the test is not taking streams or
// the connection comes from another address than the test's client.
func (t *serverTest) offerStream(c net.Conn, seq uint64) (refused string) {
	if from := remoteAddr(c); from != t.peerAddr {
		return fmt.Sprintf("a data stream of the test from %s, from another address", t.peer)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.accepting {
		return "a data stream after the test's streams were complete"
	}
	st := newStream(0, false, false)
	st.conn, st.seq = c, seq
	select {
	case t.incoming <- st:
		return ""
	default:
		return "more data streams than the test asked for"
	}
}

// refusal is a SERVER_ERROR the server sends, with iperf3's code.
type refusal struct {
	code  int32
	errno syscall.Errno
	what  string
}

func (r *refusal) Error() string { return r.what }

func (t *serverTest) run(ctx context.Context) {
	defer t.closeAll()
	err := t.session(ctx)
	var r *refusal
	if errors.As(err, &r) {
		t.sendRefusal(r)
	}
	if err != nil {
		t.srv.refusedf("test from %s: %v", t.peer, err)
	}
}

// sendRefusal sends SERVER_ERROR with r's code, once per test.
func (t *serverTest) sendRefusal(r *refusal) {
	if t.refused {
		return
	}
	t.refused = true
	t.ctl.writeState(stServerError)
	var b [8]byte
	binary.BigEndian.PutUint32(b[0:], uint32(r.code))
	binary.BigEndian.PutUint32(b[4:], uint32(r.errno))
	t.ctl.deadline(0)
	t.ctl.c.Write(b[:])
}

func (t *serverTest) closeAll() {
	t.mu.Lock()
	t.accepting = false
	t.mu.Unlock()
	// Connections offered after the test stopped taking them.
	for {
		select {
		case st := <-t.incoming:
			if st.conn != nil && !st.udp {
				st.conn.Close()
			}
			continue
		default:
		}
		break
	}
	for _, st := range t.streams {
		if st.conn != nil {
			st.conn.Close()
		}
	}
	if t.udpConn != nil {
		t.udpConn.Close()
	}
	t.ctl.c.Close()
}

func (t *serverTest) session(ctx context.Context) error {
	if err := t.ctl.writeState(stParamExchange); err != nil {
		return err
	}
	// The parameters follow PARAM_EXCHANGE at once from a real client;
	// a silent one holds the test slot for the hello timeout only.
	var p peerParams
	t.ctl.timeout = t.srv.helloTimeout()
	err := t.ctl.readJSON(&p)
	t.ctl.timeout = t.srv.stepTimeout()
	if err != nil {
		return &refusal{code: ieRecvParams, what: "reading the parameters: " + err.Error()}
	}
	if err := t.accept(&p); err != nil {
		return err // refused: a waiting client has the slot once it goes
	}
	close(t.paramsIn)
	if t.udp {
		if err := t.listenUDP(); err != nil {
			return err
		}
	}
	t.mu.Lock()
	t.accepting = true
	t.mu.Unlock()
	if err := t.ctl.writeState(stCreateStreams); err != nil {
		return err
	}
	if err := t.collectStreams(ctx); err != nil {
		return err
	}
	// The client may send from TEST_START on (iperf3's does): from here
	// the shared UDP socket's datagrams are data, not hellos. Marked
	// only when the streams start moving, the first ones a client sent
	// were dropped and counted lost.
	t.running.Store(true)
	if err := t.ctl.writeState(stTestStart); err != nil {
		return err
	}
	if err := t.ctl.writeState(stTestRunning); err != nil {
		return err
	}
	return t.runStreams(ctx)
}

// accept checks the client's parameters against the server's limits.
func (t *serverTest) accept(p *peerParams) error {
	max := t.srv.maxDuration()
	switch {
	case p.SCTP != nil:
		return &refusal{code: ieProtocol, what: "SCTP asked for: bondtop serves TCP and UDP"}
	case p.AuthToken != nil:
		return &refusal{code: ieAuthTest, what: "authentication asked for: bondtop serve does not authenticate"}
	case p.Reverse != nil && p.Bidirectional != nil:
		return &refusal{code: ieReverseBidir, what: "reverse and bidirectional at once"}
	case p.Parallel < 0 || p.Parallel > MaxStreams:
		return &refusal{code: ieNumStreams, what: fmt.Sprintf("%v parallel streams asked for", float64(p.Parallel))}
	case p.Time < 0 || time.Duration(float64(p.Time+p.Omit)*float64(time.Second)) > max:
		return &refusal{code: ieDuration, what: fmt.Sprintf("a %vs test asked for; at most %v", float64(p.Time), max)}
	case p.Omit < 0:
		return &refusal{code: ieOmit, what: "a negative omit period"}
	}
	t.udp = p.UDP != nil && p.TCP == nil
	t.udp64 = p.UDP64 != nil
	t.streamsN = max1(int(p.Parallel))
	t.duration = time.Duration(float64(p.Time) * float64(time.Second))
	t.omit = time.Duration(float64(p.Omit) * float64(time.Second))
	switch {
	case p.Bidirectional != nil:
		t.direction = Bidirectional
	case p.Reverse != nil:
		t.direction = Receive
	default:
		t.direction = Send
	}
	t.rate = uint64(max0(p.Bandwidth))
	t.block = int(max0(p.Len))
	switch {
	case t.udp && t.block == 0:
		t.block = defaultUDPBlock
	case t.udp && (t.block < udpHeaderSize64 || t.block > maxUDPBlock):
		return &refusal{code: ieUDPBlockSize, what: fmt.Sprintf("UDP datagrams of %d bytes asked for", t.block)}
	case t.block == 0:
		t.block = defaultTCPBlock
	case t.block > maxTCPBlock:
		return &refusal{code: ieBlockSize, what: fmt.Sprintf("blocks of %d bytes asked for", t.block)}
	}
	if t.udp && t.rate == 0 {
		// iperf3 sends UDP's rate unless it is -b 0: as fast as the
		// client can. No server can pace datagrams a client sends, so
		// under --max-rate that test is refused, and where only this
		// server sends it sends at the cap; without a cap, at iperf3's
		// default.
		switch {
		case t.srv.MaxRate > 0 && t.direction != Receive:
			return &refusal{code: ieTotalRate, what: fmt.Sprintf("UDP without a rate (-b 0) asked for; this server allows at most %s per test (--max-rate): give -b",
				formatRate(float64(t.srv.MaxRate)))}
		case t.srv.MaxRate == 0:
			t.rate = defaultUDPRate
		}
	}
	return t.capRate()
}

// capRate applies the server's --max-rate: a client that asks for more
// is refused in words; one that asks for nothing in particular (TCP's
// default, UDP's -b 0) gets its share, each stream paced at the cap
// divided among all of the test's streams.
func (t *serverTest) capRate() error {
	limit := t.srv.MaxRate
	if limit == 0 {
		return nil
	}
	n := uint64(t.total())
	if t.rate > 0 && float64(t.rate)*float64(n) > float64(limit) {
		return &refusal{code: ieTotalRate, what: fmt.Sprintf("%d streams at %s asked for; this server allows at most %s per test (--max-rate)",
			n, formatRate(float64(t.rate)), formatRate(float64(limit)))}
	}
	t.streamCap = max(limit/n, 1)
	return nil
}

// sendRate is what the server sends on each of its streams at most.
func (t *serverTest) sendRate() uint64 {
	if t.streamCap > 0 && (t.rate == 0 || t.rate > t.streamCap) {
		return t.streamCap
	}
	return t.rate
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

func max0(n num) float64 {
	if n < 0 {
		return 0
	}
	return float64(n)
}

// total is the number of streams the client will connect.
func (t *serverTest) total() int {
	if t.direction == Bidirectional {
		return 2 * t.streamsN
	}
	return t.streamsN
}

// serverSends says whether the server sends on the i-th stream to
// connect: in bidirectional tests the client connects its senders first.
func (t *serverTest) serverSends(i int) bool {
	switch t.direction {
	case Receive:
		return true
	case Bidirectional:
		return i >= t.streamsN
	}
	return false
}

// collectStreams waits for every data stream, within one step timeout.
func (t *serverTest) collectStreams(ctx context.Context) error {
	timer := time.NewTimer(t.srv.stepTimeout())
	defer timer.Stop()
	for i := range t.total() {
		select {
		case st := <-t.incoming:
			t.streams = append(t.streams, st)
		case <-timer.C:
			return fmt.Errorf("%d of %d streams connected within %v", i, t.total(), t.srv.stepTimeout())
		case <-ctx.Done():
			t.ctl.writeState(stServerTerminate)
			return errors.New("server shutting down")
		}
	}
	slices.SortFunc(t.streams, func(a, b *stream) int { return cmp.Compare(a.seq, b.seq) })
	for i, st := range t.streams {
		st.id = 1
		if i > 0 {
			st.id = i + 2
		}
		st.sender = t.serverSends(i)
		if st.conn != nil {
			st.conn.SetDeadline(time.Time{})
		}
	}
	t.mu.Lock()
	t.accepting = false
	t.mu.Unlock()
	return nil
}

// listenUDP binds the UDP twin of the control port before CREATE_STREAMS:
// iperf3 clients send their UDP hello there.
func (t *serverTest) listenUDP() error {
	ap, err := netip.ParseAddrPort(t.local.String())
	if err != nil {
		return &refusal{code: ieStreamListen, what: "no UDP port: " + err.Error()}
	}
	la := &net.UDPAddr{Port: int(ap.Port())}
	if !ap.Addr().IsUnspecified() {
		la.IP = ap.Addr().AsSlice()
	}
	uc, err := net.ListenUDP("udp", la)
	if err != nil {
		var errno syscall.Errno
		errors.As(err, &errno)
		return &refusal{code: ieStreamListen, errno: errno, what: "UDP port: " + err.Error()}
	}
	uc.SetReadBuffer(4 << 20)
	uc.SetWriteBuffer(4 << 20)
	t.udpConn = uc
	t.byPeer = make(map[netip.AddrPort]*stream)
	go t.udpLoop(uc)
	return nil
}

// udpLoop reads the shared UDP socket: hellos while streams connect, data
// for the receiving streams while the test runs.
func (t *serverTest) udpLoop(uc *net.UDPConn) {
	buf := make([]byte, maxUDPBlock+64)
	var helloSeq uint64
	for {
		n, from, err := uc.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if from.Addr() != t.peerAddr {
			// Not the test's client: answering it, or sending it a
			// reverse test's data, would make this server reflect
			// traffic onto a host that never asked for it.
			continue
		}
		if t.running.Load() {
			if st := t.byPeer[from]; st != nil && !st.sender {
				st.gotDatagram(buf[:n], time.Now(), t.udp64)
			}
			continue
		}
		if n != 4 || string(buf[:4]) != udpConnectMsg {
			continue
		}
		t.mu.Lock()
		if !t.accepting || t.byPeer[from] != nil {
			t.mu.Unlock()
			continue
		}
		st := newStream(0, false, true)
		helloSeq++
		st.seq = helloSeq
		st.shared = uc
		st.peer = net.UDPAddrFromAddrPort(from)
		select {
		case t.incoming <- st:
			t.byPeer[from] = st
			uc.WriteToUDPAddrPort([]byte(udpConnectReply), from)
		default:
		}
		t.mu.Unlock()
	}
}
