// Package webguard serves bondtop's /metrics with the Prometheus exporter
// toolkit (github.com/prometheus/exporter-toolkit/web), which does TLS,
// client certificates, basic auth, headers and the rate limit exactly as
// for every other exporter, from the same --web.config.file. Around it,
// a thin layer keeps what a long-running root daemon needs:
//
//   - the toolkit reads a private snapshot of the web config, never the
//     admin's file: a change is taken only once the file is complete and
//     the toolkit accepts it, a change that would protect less (no TLS,
//     no users, no client certificate) is refused and logged, and reading
//     can never block (no FIFO, no device, a size bound);
//   - connections are accepted always, and at the limits an idle or
//     silent one is closed, taken from the client that holds the most, so
//     held sockets cannot lock a new scraper out;
//   - bcrypt costs above MaxBcryptCost are refused, and each client
//     address has at most a couple of password checks running, so one
//     client's bad passwords do not delay another's login;
//   - settings that protect less than they seem are named at start.
//
// docs/web-config.md describes it for admins.
package webguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
)

// Options configure Serve.
type Options struct {
	// ConfigFile is the --web.config.file; "" serves plain HTTP.
	ConfigFile string
	// Log receives the server's log lines (reloads, refusals, the
	// toolkit's errors); nil discards them.
	Log io.Writer
	// MaxConns and MaxConnsPerClient: DefaultMaxConns and
	// DefaultMaxConnsPerClient when zero.
	MaxConns, MaxConnsPerClient int
}

// retryEvery is how often a web config that failed to load is read again
// although it did not change (a certificate it names may have been
// fixed).
const retryEvery = 2 * time.Second

// pollEvery is how often the files are checked without a request or a
// connection to prompt it: a change shows in the log soon, and an HTTP/2
// connection's requests, which no connection event announces, see it.
const pollEvery = 5 * time.Second

// Check reads and checks the web config file as Serve will, for the
// start of the program: it returns whether the file turns TLS on, and
// the settings that protect less than they seem (warnings to show).
func Check(path string) (tls bool, warnings []string, err error) {
	dir, err := os.MkdirTemp(os.Getenv("RUNTIME_DIRECTORY"), "bondtop-web-")
	if err != nil {
		return false, nil, err
	}
	defer os.RemoveAll(dir)
	s, err := load(path, dir)
	if err != nil {
		return false, nil, err
	}
	return s.protection().tls, s.warnings(), nil
}

// Serve serves srv on ln until srv is shut down, as web.Serve does, with
// the layer this package adds. It sets srv.Handler (wrapped by the
// toolkit's and this package's), srv.ConnState, and for TLS the fields
// the toolkit sets; srv must not serve elsewhere.
func Serve(ln net.Listener, srv *http.Server, o Options) error {
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxConnsPerClient <= 0 {
		o.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	g := &guard{log: o.Log, auth: newAuthLimiter(authPerClient)}
	tracker := newConnTracker(o.MaxConns, o.MaxConnsPerClient)
	if testHook != nil {
		testHook(srv, tracker)
	}
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		tracker.connState(c, s)
		if s == http.StateActive {
			g.check()
		}
	}
	snapPath := ""
	if o.ConfigFile != "" {
		path, err := filepath.Abs(o.ConfigFile)
		if err != nil {
			return err
		}
		dir, err := os.MkdirTemp(os.Getenv("RUNTIME_DIRECTORY"), "bondtop-web-")
		if err != nil {
			return fmt.Errorf("web config: a private directory for its snapshot: %w", err)
		}
		defer os.RemoveAll(dir)
		snap, err := load(path, dir)
		if err != nil {
			return err
		}
		snapPath = filepath.Join(dir, "web.yml")
		if err := snap.install(dir, snapPath); err != nil {
			return err
		}
		g.path, g.dir, g.snapPath = path, dir, snapPath
		g.cur, g.stamps, g.start = snap, snap.stamps, snap
		for _, w := range snap.warnings() {
			g.logf("web config %s: %s", path, w)
		}
		stop := make(chan struct{})
		defer close(stop)
		go g.poll(stop)
	}
	var once sync.Once
	l := &listener{Listener: ln, t: tracker, onAccept: func() {
		// The toolkit has installed its handler (auth, headers, rate
		// limit) before it serves: the first Accept, on the serving
		// goroutine before any connection's goroutine starts, puts this
		// package's in front of it.
		once.Do(func() { srv.Handler = g.front(srv.Handler) })
		g.check()
	}}
	logger := slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return web.Serve(l, srv, &web.FlagConfig{WebConfigFile: &snapPath}, logger)
}

// testHook, set by tests, sees each server's connection tracker.
var testHook func(*http.Server, *connTracker)

// guard keeps the snapshot the toolkit reads in step with the admin's
// file, and runs in front of the toolkit's handler.
type guard struct {
	log  io.Writer
	auth *authLimiter

	path, dir, snapPath string // "" without a web config

	mu      sync.Mutex
	cur     *snapshot // in force
	start   *snapshot // in force at start: what the listener speaks
	stamps  []stamp   // the files as last read, good or bad
	failed  time.Time // when the last read failed; zero after a good one
	lastErr string    // the error last logged
}

func (g *guard) logf(format string, args ...any) {
	fmt.Fprintf(g.log, format+"\n", args...)
}

func (g *guard) poll(stop <-chan struct{}) {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			g.check()
		}
	}
}

// check reads the admin's file again if it (or a file it names) changed,
// or if it failed a while ago, and takes it if it is complete, accepted
// by the toolkit, and protects as much as the one in force.
func (g *guard) check() {
	if g.path == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !changed(g.stamps) && (g.failed.IsZero() || time.Since(g.failed) < retryEvery) {
		return
	}
	snap, err := load(g.path, g.dir)
	if err == nil {
		err = g.acceptable(snap)
	}
	if err != nil {
		// Stamp the file as it is now: the next change, or the retry,
		// reads it again.
		st, _ := statStamp(g.path)
		g.stamps = append([]stamp{st}, g.stamps[min(1, len(g.stamps)):]...)
		g.failed = time.Now()
		if msg := err.Error(); msg != g.lastErr {
			g.lastErr = msg
			g.logf("web config %s: %s; the last good one stays in force", g.path, msg)
		}
		return
	}
	if err := snap.install(g.dir, g.snapPath); err != nil {
		g.logf("web config %s: %v; the last good one stays in force", g.path, err)
		g.failed = time.Now()
		return
	}
	g.cur, g.stamps, g.failed, g.lastErr = snap, snap.stamps, time.Time{}, ""
	g.logf("web config %s: reloaded", g.path)
	for _, w := range snap.warnings() {
		g.logf("web config %s: %s", g.path, w)
	}
}

// acceptable refuses a config that protects less than the one in force,
// or that asks for what the running server cannot change.
func (g *guard) acceptable(next *snapshot) error {
	if lost := g.cur.protection().lost(next.protection()); lost != "" {
		return fmt.Errorf("refused: it drops %s, which the config in force has (to drop protection on purpose, restart bondtop)", lost)
	}
	if next.protection().tls != g.start.protection().tls {
		return errors.New("refused: it turns TLS on, which the listener started without (restart bondtop to serve HTTPS)")
	}
	if next.config.RateLimiterConfig != g.start.config.RateLimiterConfig || next.config.HTTPConfig.HTTP2 != g.start.config.HTTPConfig.HTTP2 {
		g.logf("web config %s: rate_limit and http2 take effect at the next start", g.path)
	}
	return nil
}

// front runs before the toolkit's handler: the file is checked for a
// change, and a request with credentials waits for one of its client's
// few password-check slots.
func (g *guard) front(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.check()
		if _, _, ok := r.BasicAuth(); ok && g.path != "" {
			ctx, cancel := context.WithTimeout(r.Context(), authWait)
			release, ok := g.auth.acquire(ctx, clientOf(remoteAddr(r.RemoteAddr)))
			cancel()
			if !ok {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "too many logins at once from this address", http.StatusTooManyRequests)
				return
			}
			defer release()
		}
		next.ServeHTTP(w, r)
	})
}

// remoteAddr makes a net.Addr of a request's RemoteAddr.
type remoteAddr string

func (a remoteAddr) Network() string { return "tcp" }
func (a remoteAddr) String() string  { return string(a) }
