package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
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
	// Logf, when set, receives one line per test and per refusal.
	Logf func(format string, args ...any)

	mu  sync.Mutex
	cur *serverTest // the running test, nil when idle
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
// waits for the running test to end.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer wg.Wait()
	// Accept order is the client's connect order: the streams' ids
	// follow it, however the goroutines below are scheduled.
	var seq uint64
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		seq++
		wg.Add(1)
		go func(seq uint64) {
			defer wg.Done()
			s.handle(ctx, c, ln.Addr(), seq)
		}(seq)
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
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
// silent connection holds nothing but itself.
func (s *Server) handle(ctx context.Context, c net.Conn, local net.Addr, seq uint64) {
	c.SetDeadline(time.Now().Add(s.stepTimeout()))
	var cookie [cookieSize]byte
	if _, err := io.ReadFull(c, cookie[:]); err != nil || !validCookie(cookie[:]) {
		c.Close()
		return
	}
	s.mu.Lock()
	cur := s.cur
	switch {
	case cur != nil && cur.cookie == cookie:
		s.mu.Unlock()
		if !cur.offerStream(c, seq) {
			deny(c)
		}
		return
	case cur != nil:
		s.mu.Unlock()
		s.logf("refused %s: busy with the test from %s", c.RemoteAddr(), cur.peer)
		deny(c)
		return
	}
	t := newServerTest(s, c, cookie, local)
	s.cur = t
	s.mu.Unlock()

	defer func() {
		s.mu.Lock()
		s.cur = nil
		s.mu.Unlock()
	}()
	t.run(ctx)
}

// deny answers ACCESS_DENIED, as a busy iperf3 server does.
func deny(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write([]byte{0xff}) // ACCESS_DENIED, -1
	c.Close()
}
