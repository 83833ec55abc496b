package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/bondtop/bondtop/internal/loglimit"
)

// Server answers iperf3 clients (iperf3 -c, or bondtop's own) one test at
// a time, like `iperf3 -s`. Every step has a timeout and every message a
// size limit, so a client that stalls, lies or disappears costs at most a
// timeout and never the next test.
type Server struct {
	// MaxDuration ends any test, asked-for length included (MaxDuration
	// when 0); a longer test is refused, an open-ended one is cut here.
	MaxDuration time.Duration
	// StepTimeout bounds each protocol step (DefaultStepTimeout when 0).
	StepTimeout time.Duration
	// IdleTimeout ends a running test whose data stopped moving for this
	// long while its control connection stays silent (DefaultIdleTimeout
	// when 0): a client that hangs must not hold the server.
	IdleTimeout time.Duration
	// Allow, when not empty, lists the only source addresses served:
	// a connection from elsewhere is closed before a byte is read.
	Allow []netip.Prefix
	// MaxRate caps each test's data in bit/s, every stream and both
	// directions together (0: no cap), as iperf3's
	// --server-bitrate-limit: a client asking for more is refused, the
	// server paces what it sends and reads, and a test that still
	// exceeds it (UDP sent to the server) is ended with an error.
	MaxRate uint64
	// MaxPending bounds connections waiting for their cookie
	// (DefaultMaxPending when 0), MaxPendingPerSource those from one
	// address (DefaultMaxPendingPerSource); the rest are closed at once.
	// When all places are taken, a source with fewer takes the oldest
	// place of the source with most: the places are shared fairly.
	MaxPending, MaxPendingPerSource int
	// HelloTimeout bounds the wait for a connection's cookie and for a
	// new test's parameters (DefaultHelloTimeout when 0, at most
	// StepTimeout).
	HelloTimeout time.Duration
	// Logf, when set, receives one line per test and per refusal;
	// refusals and failed tests at a bounded rate.
	Logf func(format string, args ...any)

	mu       sync.Mutex
	cur      *serverTest // the running test, nil when idle
	pending  *pendingGate
	refusals *loglimit.Limiter
}

// Listen opens the server's TCP listener, with an error that says what to
// do: a port in use suggests another server, anything else names the
// address form.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("listening on %s: %w (is another iperf3 server running? choose another port with --listen)", addr, err)
	case err != nil:
		return nil, fmt.Errorf("listening on %s: %w (give ADDR:PORT, e.g. :5201 or 10.0.0.5:5201)", addr, err)
	}
	return ln, nil
}

// ListenAndServe listens on addr (":5201", "10.0.0.1:5201") and serves
// until ctx is done.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := Listen(addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve accepts connections on ln until ctx is done, then closes ln and
// waits for the running test to end. Only a listener that fails for good
// ends it early: running out of file descriptors or memory is waited out.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.init()
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer wg.Wait()
	// Accept order is the client's connect order: the streams' ids
	// follow it, however the goroutines below are scheduled.
	var seq uint64
	failures := 0
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if !retryableAccept(err) {
				return err
			}
			wait := acceptBackoff(failures)
			failures++
			s.refusedf("accepting connections: %v; trying again in %v", err, wait)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		failures = 0
		from := remoteAddr(c)
		if !allowed(s.Allow, from) {
			c.Close()
			s.refusedf("refused %s: not in --allow", c.RemoteAddr())
			continue
		}
		release, why := s.pending.take(from, c)
		if release == nil {
			c.Close()
			s.refusedf("refused %s: %s", c.RemoteAddr(), why)
			continue
		}
		seq++
		wg.Add(1)
		go func(seq uint64) {
			defer wg.Done()
			s.handle(ctx, c, ln.Addr(), seq, release)
		}(seq)
	}
}

// init sets up the admission state on first use.
func (s *Server) init() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = &pendingGate{
			max:       cmpOr(s.MaxPending, DefaultMaxPending),
			perSource: cmpOr(s.MaxPendingPerSource, DefaultMaxPendingPerSource),
		}
	}
	if s.refusals == nil {
		// Ten lines at once, then one every two seconds.
		s.refusals = loglimit.New(10, 2*time.Second)
	}
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// refusedf logs a refusal or a failed test through the rate limit, with
// the count of lines it held back before.
func (s *Server) refusedf(format string, args ...any) {
	if s.Logf == nil {
		return
	}
	ok, dropped := s.refusals.Allow(time.Now())
	if !ok {
		return
	}
	if dropped > 0 {
		format += " (and %d more refusals or failures not logged)"
		args = append(args, dropped)
	}
	s.Logf(format, args...)
}

func (s *Server) helloTimeout() time.Duration {
	return min(cmp.Or(s.HelloTimeout, DefaultHelloTimeout), s.stepTimeout())
}

func (s *Server) stepTimeout() time.Duration {
	if s.StepTimeout > 0 {
		return s.StepTimeout
	}
	return DefaultStepTimeout
}

// DefaultIdleTimeout is generous: a paced stream with large blocks
// writes seldom.
const DefaultIdleTimeout = time.Minute

func (s *Server) idleTimeout() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return DefaultIdleTimeout
}

func (s *Server) maxDuration() time.Duration {
	if s.MaxDuration > 0 {
		return s.MaxDuration
	}
	return MaxDuration
}

// handle reads a new connection's cookie and makes it the control
// connection of a new test, a data stream of the running one, or refuses
// it. Reading the cookie happens here, in the connection's goroutine, so a
// silent connection holds nothing but itself and its place among the
// pending ones, given back by release.
func (s *Server) handle(ctx context.Context, c net.Conn, local net.Addr, seq uint64, release func()) {
	c.SetDeadline(time.Now().Add(s.helloTimeout()))
	var cookie [cookieSize]byte
	_, err := io.ReadFull(c, cookie[:])
	if err != nil || !validCookie(cookie[:]) {
		release()
		c.Close()
		return
	}
	// A connection waiting in admit for the last test to go keeps its
	// place among the pending ones, so a flood of them is bounded too.
	t, ok := s.admit(ctx, c, local, cookie, seq)
	release()
	if !ok {
		return
	}
	defer func() {
		s.mu.Lock()
		s.cur = nil
		s.mu.Unlock()
		close(t.gone)
	}()
	t.run(ctx)
}

// admit makes c the control connection of a new test when the server is
// free, hands it to the running test as a data stream when it carries
// that test's cookie, or refuses it. A new client that comes while the
// running test's results are on display waits for that test to go, at
// most a step's timeout: its client has what it came for and is leaving,
// and a script that runs iperf3 twice in a row must not be told the
// server is busy (iperf3's own server takes one test at a time and holds
// the next client in its backlog until then).
func (s *Server) admit(ctx context.Context, c net.Conn, local net.Addr, cookie [cookieSize]byte, seq uint64) (*serverTest, bool) {
	s.mu.Lock()
	cur := s.cur
	if cur != nil && cur.cookie != cookie {
		// Wait once for a test that is going (its results are out) or
		// that may be a silent client's (no parameters yet), then decide.
		var params <-chan struct{} // nil: wait for the test to go
		var limit time.Duration
		switch {
		case cur.finishing.Load():
			limit = s.stepTimeout()
		case !cur.hasParams():
			params, limit = cur.paramsIn, s.helloTimeout()+time.Second
		}
		if limit > 0 {
			s.mu.Unlock()
			select {
			case <-cur.gone:
			case <-params:
			case <-time.After(limit):
			case <-ctx.Done():
				c.Close()
				return nil, false
			}
			s.mu.Lock()
			cur = s.cur
		}
	}
	switch {
	case cur != nil && cur.cookie == cookie:
		s.mu.Unlock()
		if why := cur.offerStream(c, seq); why != "" {
			s.refusedf("refused %s: %s", c.RemoteAddr(), why)
			deny(c)
		}
		return nil, false
	case cur != nil:
		s.mu.Unlock()
		s.refusedf("refused %s: busy with the test from %s", c.RemoteAddr(), cur.peer)
		deny(c)
		return nil, false
	}
	t := newServerTest(s, c, cookie, local)
	s.cur = t
	s.mu.Unlock()
	return t, true
}

// deny answers ACCESS_DENIED, as a busy iperf3 server does.
func deny(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write([]byte{0xff}) // ACCESS_DENIED, -1
	c.Close()
}
