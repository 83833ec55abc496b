package webguard

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// fakeConn is a net.Conn with a remote address and nothing else.
type fakeConn struct {
	net.Conn
	remote net.Addr
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) Close() error         { c.closed = true; return nil }

func conn(ip string) *fakeConn {
	return &fakeConn{remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 1}}
}

// TestVictims: at the per-client limit the client's own oldest idle
// connection goes, else its oldest silent one, else the new one; at the
// total limit the victim comes from the client holding the most, never
// from a client with one connection.
func TestVictims(t *testing.T) {
	tr := newConnTracker(6, 3)
	add := func(ip string, state http.ConnState) *trackedConn {
		c, victims := tr.add(conn(ip))
		for _, v := range victims {
			v.Close()
		}
		if state != http.StateNew {
			tr.connState(c, state)
		}
		time.Sleep(time.Millisecond) // distinct ages
		return c
	}
	busyA := add("10.0.0.1", http.StateActive)
	silentA := add("10.0.0.1", http.StateNew)
	idleA := add("10.0.0.1", http.StateIdle)
	// A fourth from A: A's idle one goes.
	a4 := add("10.0.0.1", http.StateNew)
	if !idleA.closed || silentA.closed || busyA.closed || a4.closed {
		t.Fatalf("per client: idle %v silent %v busy %v new %v; want only the idle one closed", idleA.closed, silentA.closed, busyA.closed, a4.closed)
	}
	// A fifth: A's oldest silent one goes.
	a5 := add("10.0.0.1", http.StateNew)
	if !silentA.closed || a4.closed || a5.closed {
		t.Fatalf("per client: oldest silent %v, newer %v %v", silentA.closed, a4.closed, a5.closed)
	}
	// B, C and D fill up to the total limit; one more from E: a victim
	// from A (3 held), not from B, C, D or E.
	b := add("10.0.0.2", http.StateIdle)
	c := add("10.0.0.3", http.StateNew)
	d := add("10.0.0.4", http.StateNew)
	e := add("10.0.0.5", http.StateNew)
	if b.closed || c.closed || d.closed || e.closed {
		t.Fatal("a client with one connection lost it")
	}
	if !a4.closed {
		t.Fatalf("at the total limit, A's oldest silent connection stays")
	}
	if n := tr.held(); n != 6 {
		t.Fatalf("%d held, want 6", n)
	}
	// All of A's busy: a new one from A is itself closed.
	tr.connState(a5, http.StateActive)
	a6 := add("10.0.0.1", http.StateNew)
	a7 := add("10.0.0.1", http.StateNew)
	if busyA.closed || a5.closed || !a7.closed {
		t.Fatalf("busy connections closed (%v %v), or the new one kept (%v, %v)", busyA.closed, a5.closed, a6.closed, a7.closed)
	}
}
