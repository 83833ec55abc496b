package webguard

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
)

// Connection limits: a scraper needs one connection and a fraction of a
// second, so a few dozen connections are plenty, and idle or silent ones
// cannot pile up until the process runs out of file descriptors (which
// would stop its reads of the host too). Unlike a listener that stops
// accepting at its limit (new scrapers then wait in the kernel's backlog
// behind whoever holds the slots), the server always accepts, and at the
// limit closes a connection that is doing nothing, taken from the client
// address that holds the most. See docs/web-config.md.
const (
	// DefaultMaxConns is the connections held at once, over all clients.
	DefaultMaxConns = 64
	// DefaultMaxConnsPerClient is the connections one client address
	// holds at once; a new one beyond it closes that client's own
	// oldest idle or silent connection (or is itself closed when all of
	// its connections are busy).
	DefaultMaxConnsPerClient = 16
)

// connTracker follows every accepted connection's state (from the
// server's ConnState hook) and decides which to close at the limits.
type connTracker struct {
	max, perClient int

	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	counts map[string]int // by client address
}

func newConnTracker(max, perClient int) *connTracker {
	return &connTracker{max: max, perClient: perClient, conns: map[*trackedConn]struct{}{}, counts: map[string]int{}}
}

// trackedConn is an accepted connection with what the tracker knows of it.
type trackedConn struct {
	net.Conn
	t      *connTracker
	client string
	// Guarded by t.mu:
	state  http.ConnState // StateNew until a request's first byte: silent
	since  time.Time      // when state was entered
	closed bool
}

// Close closes the connection and forgets it.
func (c *trackedConn) Close() error {
	c.t.forget(c)
	return c.Conn.Close()
}

func (t *connTracker) forget(c *trackedConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	delete(t.conns, c)
	if t.counts[c.client]--; t.counts[c.client] <= 0 {
		delete(t.counts, c.client)
	}
}

// add tracks a new connection and returns the connections to close to
// stay within the limits (possibly c itself).
func (t *connTracker) add(raw net.Conn) (*trackedConn, []*trackedConn) {
	c := &trackedConn{Conn: raw, t: t, client: clientOf(raw.RemoteAddr()), state: http.StateNew, since: time.Now()}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.conns[c] = struct{}{}
	t.counts[c.client]++
	var victims []*trackedConn
	if t.counts[c.client] > t.perClient {
		victims = append(victims, t.victim(c.client, c))
	} else if len(t.conns) > t.max {
		victims = append(victims, t.victim("", c))
	}
	return c, victims
}

// victim picks the connection to close: of client (of the client holding
// the most connections when ""), its longest idle keep-alive connection,
// else its longest silent one (no request yet: a TLS handshake or a
// request line that does not come); newest, the connection just
// accepted, when all of them are busy serving a request. t.mu is held.
func (t *connTracker) victim(client string, newest *trackedConn) *trackedConn {
	if client == "" {
		most := 0
		for cl, n := range t.counts {
			if n > most || (n == most && cl < client) {
				client, most = cl, n
			}
		}
	}
	var idle, silent *trackedConn
	for c := range t.conns {
		if c.client != client || c == newest {
			continue
		}
		switch c.state {
		case http.StateIdle:
			if idle == nil || c.since.Before(idle.since) {
				idle = c
			}
		case http.StateNew:
			if silent == nil || c.since.Before(silent.since) {
				silent = c
			}
		}
	}
	switch {
	case idle != nil:
		return idle
	case silent != nil:
		return silent
	}
	return newest
}

// connState is the server's ConnState hook: it follows each connection's
// state, for victim.
func (t *connTracker) connState(nc net.Conn, state http.ConnState) {
	c := unwrap(nc)
	if c == nil {
		return
	}
	switch state {
	case http.StateClosed, http.StateHijacked:
		t.forget(c)
		return
	}
	t.mu.Lock()
	c.state, c.since = state, time.Now()
	t.mu.Unlock()
}

// counts returns how many connections are held, for tests and logs.
func (t *connTracker) held() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// unwrap finds the trackedConn under what the server hands ConnState (a
// *tls.Conn over it for HTTPS).
func unwrap(nc net.Conn) *trackedConn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, _ := nc.(*trackedConn)
	return c
}

// clientOf is the client's address without its port: one host's
// connections, whatever ports it opens them from.
func clientOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// listener accepts for the server: every connection tracked, the limits
// kept by closing victims (never by waiting), and onAccept run before
// each connection is handed out.
type listener struct {
	net.Listener
	t        *connTracker
	onAccept func()
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		raw, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.onAccept != nil {
			l.onAccept()
		}
		c, victims := l.t.add(raw)
		keep := true
		for _, v := range victims {
			if v == c {
				keep = false
			}
			v.Close()
		}
		if keep {
			return c, nil
		}
	}
}
