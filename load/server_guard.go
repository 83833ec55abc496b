package load

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"
)

// What the server admits before a connection has said a byte: the
// --allow list, and bounds on connections still waiting for their cookie,
// so a flood of silent connections costs neither every file descriptor
// nor the next real test.

const (
	// DefaultMaxPending bounds connections accepted but not yet
	// identified by their cookie. Real clients send the cookie at once,
	// so a few hundred is room for many at the same instant.
	DefaultMaxPending = 256
	// DefaultMaxPendingPerSource bounds those from one address (one /64
	// for IPv6, where a host has many): iperf3 and bondtop's client
	// connect their streams one after the other.
	DefaultMaxPendingPerSource = 32
	// DefaultHelloTimeout bounds the wait for a new connection's cookie
	// and, once a control connection has the test slot, for its
	// parameters: a real client sends both at once, and a silent one
	// holds its place, or the slot, no longer than this.
	DefaultHelloTimeout = 2 * time.Second
)

// sourceKey is the address a bound applies to: the address itself for
// IPv4, its /64 for IPv6 (one host's share of addresses).
func sourceKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is4() {
		return a
	}
	p, err := a.Prefix(64)
	if err != nil {
		return a
	}
	return p.Addr()
}

// remoteAddr is c's peer address, IPv4-mapped addresses unmapped; the
// zero Addr when c has none (not TCP).
func remoteAddr(c net.Conn) netip.Addr {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// pendingGate counts connections waiting for their cookie (or, with
// it, for the last test to go), in all and per source. The places are
// shared fairly: when all are taken, a connection from a source holding
// fewer than the source holding most takes the oldest place of that
// one, whose connection is closed. So hosts holding silent connections
// by the hundred cannot keep out one that has a test to run: each source
// is sure of max divided by the number of sources waiting.
type pendingGate struct {
	max, perSource int

	mu       sync.Mutex
	total    int
	seq      uint64
	bySource map[netip.Addr][]*pendingPlace // oldest first
}

// pendingPlace is one connection's place; evict closes the connection
// when another source takes the place.
type pendingPlace struct {
	key   netip.Addr
	seq   uint64 // order taken
	evict io.Closer
	gone  bool
}

// take admits a connection from a (closed through evict if its place is
// taken from it), or says which bound it would cross; release gives the
// place back once the cookie has been read (or the connection left).
func (g *pendingGate) take(a netip.Addr, evict io.Closer) (release func(), refused string) {
	k := sourceKey(a)
	g.mu.Lock()
	defer g.mu.Unlock()
	mine := len(g.bySource[k])
	if mine >= g.perSource {
		return nil, fmt.Sprintf("%d connections from that address are already waiting for their cookie", mine)
	}
	if g.total >= g.max {
		// The source holding most; of several, the one waiting longest.
		var most netip.Addr
		for src, places := range g.bySource {
			if m := g.bySource[most]; len(places) > len(m) || (len(places) == len(m) && places[0].seq < m[0].seq) {
				most = src
			}
		}
		if len(g.bySource[most]) <= mine+1 {
			return nil, fmt.Sprintf("%d connections are already waiting for their cookie, from %d addresses", g.total, len(g.bySource))
		}
		old := g.bySource[most][0]
		g.drop(old)
		if old.evict != nil {
			old.evict.Close()
		}
	}
	if g.bySource == nil {
		g.bySource = make(map[netip.Addr][]*pendingPlace)
	}
	g.seq++
	p := &pendingPlace{key: k, seq: g.seq, evict: evict}
	g.total++
	g.bySource[k] = append(g.bySource[k], p)
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.drop(p)
	}, ""
}

// drop gives p's place back, once.
func (g *pendingGate) drop(p *pendingPlace) {
	if p.gone {
		return
	}
	p.gone = true
	g.total--
	places := g.bySource[p.key]
	if i := slices.Index(places, p); i >= 0 {
		places = slices.Delete(places, i, i+1)
	}
	if len(places) == 0 {
		delete(g.bySource, p.key)
	} else {
		g.bySource[p.key] = places
	}
}

// allowed says whether the Allow list lets a in (every address when the
// list is empty).
func allowed(allow []netip.Prefix, a netip.Addr) bool {
	if len(allow) == 0 {
		return true
	}
	// A link-local client's zone says which interface it came in on;
	// the prefixes have none (and Contains refuses a zoned address).
	a = a.Unmap().WithZone("")
	for _, p := range allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// retryableAccept reports an accept error that passes: out of file
// descriptors or kernel memory, a connection aborted before it was
// accepted. The server waits and accepts again, as net/http does; any
// other error means the listener itself is gone.
func retryableAccept(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// acceptBackoff is the wait after the n-th accept failure in a row: 5 ms
// doubling up to a second.
func acceptBackoff(n int) time.Duration {
	d := 5 * time.Millisecond
	for range min(n, 8) {
		d *= 2
	}
	return min(d, time.Second)
}
