package webguard

import (
	"context"
	"sync"
	"time"
)

// authPerClient is how many requests with credentials one client address
// has in the toolkit's password check at once. The toolkit runs one
// bcrypt comparison at a time for the whole server (it is tens of
// milliseconds of a core): without this bound, one client's flood of
// wrong passwords (200 streams of one HTTP/2 connection) queues before
// everyone else's login.
const authPerClient = 2

// authWait is how long a request waits for its client's slot before it
// is answered 429.
const authWait = 5 * time.Second

// authLimiter holds a semaphore per client address while it is in use.
type authLimiter struct {
	n       int
	mu      sync.Mutex
	clients map[string]*authSlots
}

type authSlots struct {
	ch   chan struct{}
	refs int
}

func newAuthLimiter(n int) *authLimiter {
	return &authLimiter{n: n, clients: map[string]*authSlots{}}
}

// acquire waits for one of client's slots until ctx ends; release gives
// it back.
func (a *authLimiter) acquire(ctx context.Context, client string) (release func(), ok bool) {
	a.mu.Lock()
	s := a.clients[client]
	if s == nil {
		s = &authSlots{ch: make(chan struct{}, a.n)}
		a.clients[client] = s
	}
	s.refs++
	a.mu.Unlock()
	done := func() {
		a.mu.Lock()
		if s.refs--; s.refs == 0 {
			delete(a.clients, client)
		}
		a.mu.Unlock()
	}
	select {
	case s.ch <- struct{}{}:
		return func() { <-s.ch; done() }, true
	case <-ctx.Done():
		done()
		return nil, false
	}
}
