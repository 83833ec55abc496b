package load

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
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
// it, for the last test to go), in all and per source.
type pendingGate struct {
	max, perSource int

	mu       sync.Mutex
	total    int
	bySource map[netip.Addr]int
}

// take admits a connection from a, or says which bound it would cross;
// release gives the place back once the cookie has been read.
func (g *pendingGate) take(a netip.Addr) (release func(), refused string) {
	k := sourceKey(a)
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.total >= g.max:
		return nil, fmt.Sprintf("%d connections are already waiting for their cookie", g.total)
	case g.bySource[k] >= g.perSource:
		return nil, fmt.Sprintf("%d connections from that address are already waiting for their cookie", g.bySource[k])
	}
	if g.bySource == nil {
		g.bySource = make(map[netip.Addr]int)
	}
	g.total++
	g.bySource[k]++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.total--
			if g.bySource[k]--; g.bySource[k] <= 0 {
				delete(g.bySource, k)
			}
		})
	}, ""
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
