package load

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// dialFrom connects to the server's port from a given loopback address
// (anything in 127.0.0.0/8 is this host).
func dialFrom(t *testing.T, src string, port uint16) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("connecting from %s: %v", src, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedAtOnce says whether the server closed c without sending a byte,
// within a second.
func closedAtOnce(c net.Conn) error {
	c.SetReadDeadline(time.Now().Add(time.Second))
	var b [1]byte
	n, err := c.Read(b[:])
	switch {
	case n > 0:
		return fmt.Errorf("the server sent %#x", b[0])
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errors.New("still open after a second")
	case err == nil:
		return errors.New("read nothing and no error")
	}
	return nil // io.EOF or a reset
}

// heldOpen says whether c is still open (the server waits for its cookie).
func heldOpen(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var b [1]byte
	_, err := c.Read(b[:])
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// lineLog collects the server's log lines.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// countAtLeast waits up to five seconds for n lines holding sub and
// returns how many there are: the server logs a refusal after sending it,
// so a client may be done before the line is written.
func (l *lineLog) countAtLeast(sub string, n int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := l.count(sub)
		if got >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *lineLog) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// Connections waiting for their cookie are bounded per source and in
// all: beyond either bound a connection is closed at once, the refusals
// are logged at a bounded rate, and once the flood ends a real iperf3
// test runs.
func TestServerBoundsPendingConnections(t *testing.T) {
	var log lineLog
	// Places are held longer than the test takes (the hello timeout is
	// tested on its own).
	srv := &Server{MaxPending: 20, MaxPendingPerSource: 5, HelloTimeout: time.Minute, Logf: log.logf}
	port := startServer(t, srv)
	var held []net.Conn
	for i := range 5 {
		c := dialFrom(t, "127.0.0.1", port)
		if !heldOpen(c) {
			t.Fatalf("connection %d from 127.0.0.1 closed below the bound", i+1)
		}
		held = append(held, c)
	}
	if err := closedAtOnce(dialFrom(t, "127.0.0.1", port)); err != nil {
		t.Fatalf("6th connection from 127.0.0.1 (bound 5): %v", err)
	}
	// One address at its bound keeps no one else out.
	if out, err := runIperf3Client(t, port, "-t", "1", "-B", "127.0.0.7"); err != nil {
		t.Fatalf("iperf3 from 127.0.0.7 while 127.0.0.1 floods: %v\n%s", err, out)
	}
	for _, src := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		for range 5 {
			held = append(held, dialFrom(t, src, port))
		}
	}
	for i, c := range held[5:] {
		if !heldOpen(c) {
			t.Fatalf("connection %d from %s closed below the bounds", i+1, c.LocalAddr())
		}
	}
	// All 20 places are taken: the first from 127.0.0.5 takes the
	// oldest place of an address holding most (127.0.0.1's first), and
	// once every address holds as many, the next is refused.
	if c := dialFrom(t, "127.0.0.5", port); !heldOpen(c) {
		t.Fatal("21st connection (bound 20, first from 127.0.0.5) was refused, not given a place")
	}
	if err := closedAtOnce(held[0]); err != nil {
		t.Fatalf("the oldest place of 127.0.0.1 was not given up: %v", err)
	}
	for range 3 {
		held = append(held, dialFrom(t, "127.0.0.5", port))
	}
	if err := closedAtOnce(dialFrom(t, "127.0.0.5", port)); err != nil {
		t.Fatalf("a 5th from 127.0.0.5, every address holding 4: %v", err)
	}
	// A burst of refusals: the log gets a bounded number of lines.
	for range 100 {
		dialFrom(t, "127.0.0.6", port).Close()
	}
	time.Sleep(200 * time.Millisecond)
	if n := log.countAtLeast("refused", 2); n < 2 || n > 12 {
		t.Errorf("%d refusal lines for 102 refusals in a moment; want the limiter's burst (10)", n)
	}
	// The flood ends; a real client gets its test.
	for _, c := range held {
		c.Close()
	}
	time.Sleep(100 * time.Millisecond)
	if out, err := runIperf3Client(t, port, "-t", "1"); err != nil {
		t.Fatalf("iperf3 after the flood: %v\n%s", err, out)
	}
}

// --allow: a client from elsewhere is closed before the server reads or
// sends a byte; one from inside gets its test.
func TestServerAllow(t *testing.T) {
	srv := &Server{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	port := startServer(t, srv)
	c := dialFrom(t, "127.0.0.1", port)
	cookie := newCookie()
	c.Write(cookie[:])
	if err := closedAtOnce(c); err != nil {
		t.Fatalf("a client outside --allow: %v", err)
	}
	out, err := runIperf3Client(t, port, "-t", "1")
	if err == nil {
		t.Fatalf("iperf3 from 127.0.0.1 outside --allow 127.0.0.2/32 ran a test:\n%s", out)
	}
	out, err = runIperf3Client(t, port, "-t", "1", "-B", "127.0.0.2")
	if err != nil {
		t.Fatalf("iperf3 from 127.0.0.2, inside --allow: %v\n%s", err, out)
	}
}

func TestAllowed(t *testing.T) {
	allow := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("fd00::/64")}
	for addr, want := range map[string]bool{
		"10.0.0.7": true, "10.0.1.7": false, "::ffff:10.0.0.7": true,
		"fd00::1": true, "fd00:0:0:1::1": false, "192.0.2.1": false, "fd00::1%eth0": true,
	} {
		if got := allowed(allow, netip.MustParseAddr(addr)); got != want {
			t.Errorf("allowed(%s) = %v, want %v", addr, got, want)
		}
	}
	if !allowed(nil, netip.MustParseAddr("192.0.2.1")) {
		t.Error("an empty list refuses")
	}
}

// One IPv6 host has a /64: its addresses share one bound.
func TestPendingGateIPv6Prefix(t *testing.T) {
	g := &pendingGate{max: 10, perSource: 2}
	for _, a := range []string{"2001:db8::1", "2001:db8::2"} {
		if r, why := g.take(netip.MustParseAddr(a), nil); r == nil {
			t.Fatalf("%s: %s", a, why)
		}
	}
	if r, _ := g.take(netip.MustParseAddr("2001:db8::ffff:3"), nil); r != nil {
		t.Error("a third address of one /64 passed a bound of 2")
	}
	r, why := g.take(netip.MustParseAddr("2001:db8:0:1::1"), nil)
	if r == nil {
		t.Fatalf("another /64: %s", why)
	}
	r()
	r() // a second release changes nothing
	if g.total != 2 {
		t.Errorf("total %d after a double release, want 2", g.total)
	}
}

func TestRetryableAccept(t *testing.T) {
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	if !retryableAccept(emfile) {
		t.Error("EMFILE ends the server")
	}
	if retryableAccept(net.ErrClosed) {
		t.Error("a closed listener is retried")
	}
	if acceptBackoff(0) != 5*time.Millisecond || acceptBackoff(100) != time.Second {
		t.Errorf("backoff %v .. %v, want 5ms .. 1s", acceptBackoff(0), acceptBackoff(100))
	}
}

// A client that trickles a byte at a time into its data stream does not
// hold the server: idle counts whole blocks, so the test ends at the idle
// timeout however often a byte comes.
func TestServerIdleIgnoresTrickle(t *testing.T) {
	srv := &Server{IdleTimeout: time.Second, StepTimeout: 5 * time.Second}
	port := startServer(t, srv)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ctl, cookie := openTest(t, addr, params{TCP: true, Time: 30, Parallel: 1, Len: 128 << 10})
	d := dialFrom(t, "127.0.0.1", port)
	d.Write(cookie[:])
	expectStates(t, ctl, stTestStart, stTestRunning)
	start := time.Now()
	go func() {
		for range 50 {
			if _, err := d.Write([]byte{'x'}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	st, err := ctl.readState(10 * time.Second)
	if err != nil || st != stServerTerminate {
		t.Fatalf("got %v, %v after %v; want SERVER_TERMINATE at the idle timeout", st, err, time.Since(start))
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("a trickle held the server %v with a 1s idle timeout", took)
	}
}

// openTest speaks the protocol as a client up to CREATE_STREAMS and
// returns the control connection and the test's cookie.
func openTest(t *testing.T, addr string, p params) (*ctrl, [cookieSize]byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctl := &ctrl{c: c, timeout: 5 * time.Second, maxJSON: maxJSONClient}
	cookie := newCookie()
	c.Write(cookie[:])
	expectStates(t, ctl, stParamExchange)
	ctl.writeJSON(p)
	expectStates(t, ctl, stCreateStreams)
	return ctl, cookie
}

// expectStates reads states from the server, one at a time, and stops
// the test at the first that is not the one wanted.
func expectStates(t *testing.T, ctl *ctrl, want ...state) {
	t.Helper()
	for _, w := range want {
		if st, err := ctl.readState(0); err != nil || st != w {
			t.Fatalf("got %v, %v; want %v", st, err, w)
		}
	}
}

// A reverse UDP test sends only to the control connection's address: a
// hello from another address gets no answer and no data, and a TCP data
// stream from there is denied. The test's own client gets its data, so
// the check can fail.
func TestServerUDPNoReflection(t *testing.T) {
	var log lineLog
	port := startServer(t, &Server{StepTimeout: 5 * time.Second, Logf: log.logf})
	server := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(port)}
	ctl, cookie := openTest(t, server.String(), params{UDP: true, Time: 2, Parallel: 1, Reverse: true, Bandwidth: 20e6, Len: 1400})

	victim, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 5)})
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var victimGot int64
	victimDone := make(chan struct{})
	go func() {
		defer close(victimDone)
		buf := make([]byte, 64<<10)
		for {
			victim.SetReadDeadline(time.Now().Add(4 * time.Second))
			n, _, err := victim.ReadFromUDP(buf)
			if err != nil {
				return
			}
			victimGot += int64(n)
		}
	}()
	// The forged hello first, from another address, then a TCP data
	// stream with the cookie from there.
	victim.WriteToUDP([]byte(udpConnectMsg), server)
	time.Sleep(100 * time.Millisecond)
	stray := dialFrom(t, "127.0.0.5", port)
	stray.Write(cookie[:])
	stray.SetReadDeadline(time.Now().Add(2 * time.Second))
	if b, _ := io.ReadAll(stray); len(b) != 1 || b[0] != 0xff {
		t.Errorf("a data stream from 127.0.0.5 got %x; want ACCESS_DENIED", b)
	}

	// The real client's hello, from the control connection's address.
	own, err := net.DialUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, server)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	own.Write([]byte(udpConnectMsg))
	own.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64<<10)
	if n, err := own.Read(buf); err != nil || string(buf[:n]) != udpConnectReply {
		t.Fatalf("own hello: %q, %v; want the reply", buf[:n], err)
	}
	expectStates(t, ctl, stTestStart, stTestRunning)
	var ownGot int64
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		own.SetReadDeadline(deadline)
		n, err := own.Read(buf)
		if err != nil {
			break
		}
		ownGot += int64(n)
	}
	ctl.writeState(stTestEnd)
	<-victimDone
	if ownGot < 1e6 {
		t.Errorf("the test's own client got %d bytes in 2 s at 20 Mbit/s", ownGot)
	}
	if victimGot != 0 {
		t.Errorf("127.0.0.5, which only sent a hello, received %d bytes", victimGot)
	}
	if log.countAtLeast("from another address", 1) == 0 {
		t.Error("the stray data stream was not logged")
	}
}

// --max-rate caps a real iperf3 test: a reverse test (the server sends)
// and a forward TCP test (the server reads at the cap) stay under it, a
// client asking for more is refused in words, and one that sends UDP
// above it is stopped with an error.
func TestServerMaxRate(t *testing.T) {
	const limit = 40e6
	var log lineLog
	port := startServer(t, &Server{MaxRate: limit, Logf: log.logf})
	for _, args := range [][]string{{"-R"}, {"-R", "-P", "4"}, {}, {"--bidir"}} {
		out, err := runIperf3Client(t, port, append(args, "-t", "3", "-J")...)
		if err != nil {
			t.Fatalf("iperf3 %v: %v\n%s", args, err, out)
		}
		var r struct {
			End struct {
				SumReceived struct {
					BitsPerSecond num `json:"bits_per_second"`
				} `json:"sum_received"`
				SumReceivedBidir struct {
					BitsPerSecond num `json:"bits_per_second"`
				} `json:"sum_received_bidir_reverse"`
			} `json:"end"`
		}
		if err := decodeLenient([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		got := float64(r.End.SumReceived.BitsPerSecond + r.End.SumReceivedBidir.BitsPerSecond)
		t.Logf("iperf3 %v under --max-rate 40M: %.1f Mbit/s", args, got/1e6)
		if got > limit*1.05 || got < limit*0.5 {
			t.Errorf("iperf3 %v: %.1f Mbit/s received, want at most (and near) 40", args, got/1e6)
		}
	}
	out, err := runIperf3Client(t, port, "-R", "-b", "30M", "-P", "2", "-t", "1")
	if err == nil || !strings.Contains(out, "server limit") {
		t.Errorf("2 streams at 30M under a 40M cap: %v\n%s\nwant the server's refusal", err, out)
	}
	// UDP as fast as the client can (-b 0): no server paces datagrams
	// it receives, so the test is refused before a datagram, short or
	// long, one stream or several.
	for _, args := range [][]string{{"-t", "1"}, {"-t", "20"}, {"-t", "1", "-P", "4"}, {"-t", "1", "--bidir"}} {
		start := time.Now()
		out, err = runIperf3Client(t, port, append([]string{"-u", "-b", "0"}, args...)...)
		if err == nil || !strings.Contains(out, "server limit") {
			t.Errorf("UDP -b 0 %v: %v\n%s\nwant the server's refusal", args, err, out)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("UDP -b 0 %v: refused after %v", args, took)
		}
	}
	// Where the server sends (-R -b 0) it paces at the cap; a client
	// asking for a rate under it runs.
	for _, args := range [][]string{{"-u", "-R", "-b", "0", "-t", "2"}, {"-u", "-b", "30M", "-t", "2"}} {
		out, err := runIperf3Client(t, port, append(args, "-J")...)
		if err != nil {
			t.Fatalf("iperf3 %v: %v\n%s", args, err, out)
		}
		var r struct {
			End struct {
				Sum struct {
					Bytes   num `json:"bytes"`
					Seconds num `json:"seconds"`
				} `json:"sum"`
			} `json:"end"`
		}
		if err := decodeLenient([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		got := float64(r.End.Sum.Bytes) * 8 / max(float64(r.End.Sum.Seconds), 1e-9)
		t.Logf("iperf3 %v under --max-rate 40M: %.1f Mbit/s", args, got/1e6)
		if got > limit*1.05 || got < 20e6 {
			t.Errorf("iperf3 %v: %.1f Mbit/s, want at most 40", args, got/1e6)
		}
	}
	if log.countAtLeast("--max-rate", 5) < 5 {
		t.Error("the refusals were not logged")
	}
}

// The cap's check: at the cap nothing is said; a tenth above the slack
// over the window is; a client far above it is judged at the first
// check, one a little above once the burst allowance is spent.
func TestRateWindow(t *testing.T) {
	const limit = 80e6 // 10 MB/s
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		perSecond float64 // bytes
		over      bool
		firstBy   int // the check that must judge it, at the latest
	}{{10e6, false, 0}, {10.5e6, false, 0}, {12e6, true, 16}, {0, false, 0}, {3e9, true, 1}, {40e6, true, 1}} {
		w := rateWindow{limit: limit, slack: 64 << 10}
		var total uint64
		var over float64
		i := 0
		for ; i < 17; i++ { // 4 s at 250 ms
			over = w.add(t0.Add(time.Duration(i)*250*time.Millisecond), total)
			if over > 0 {
				break
			}
			total += uint64(tc.perSecond / 4)
		}
		if (over > 0) != tc.over {
			t.Errorf("%v B/s under a 10 MB/s cap: over %v, want %v", tc.perSecond, over, tc.over)
		}
		if tc.over && i > tc.firstBy {
			t.Errorf("%v B/s under a 10 MB/s cap: judged at check %d, want by %d", tc.perSecond, i, tc.firstBy)
		}
		if len(w.at) > 10 {
			t.Errorf("the window keeps %d samples", len(w.at))
		}
	}
}

// The places are shared fairly: with all of them taken, a source with
// fewer takes the oldest place of the source holding most; sources
// holding as many as each other keep theirs.
func TestPendingGateFair(t *testing.T) {
	g := &pendingGate{max: 6, perSource: 4}
	var closed []string
	closer := func(name string) io.Closer {
		return closerFunc(func() error { closed = append(closed, name); return nil })
	}
	a, b, c := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	for i := range 4 {
		if r, why := g.take(a, closer(fmt.Sprintf("a%d", i))); r == nil {
			t.Fatalf("a%d: %s", i, why)
		}
	}
	if r, _ := g.take(a, nil); r != nil {
		t.Fatal("a 5th from one source passed its bound of 4")
	}
	rb, _ := g.take(b, closer("b0"))
	g.take(b, closer("b1"))
	// Full (a 4, b 2): c takes a0's place, then a1's; then every source
	// holds 2 and a fourth from c is refused.
	for i := range 2 {
		if r, why := g.take(c, closer(fmt.Sprintf("c%d", i))); r == nil {
			t.Fatalf("c%d: %s", i, why)
		}
	}
	if want := []string{"a0", "a1"}; fmt.Sprint(closed) != fmt.Sprint(want) {
		t.Errorf("closed %v, want %v", closed, want)
	}
	if r, why := g.take(c, nil); r != nil || !strings.Contains(why, "from 3 addresses") {
		t.Errorf("c2 with every source at 2: %q", why)
	}
	rb()
	rb()
	if g.total != 5 || len(g.bySource[b]) != 1 {
		t.Errorf("after b0 left: total %d, b %d", g.total, len(g.bySource[b]))
	}
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
