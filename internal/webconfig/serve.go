package webconfig

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"
)

// Serve serves srv on ln as the web config file at path says: HTTPS if
// the file asks for TLS when Serve starts, else plain HTTP, with basic
// auth, headers and the rate limit in front of srv.Handler (every path).
// An empty path serves srv as it is. It sets srv.Handler, and for TLS
// srv.TLSConfig and (http2: false) srv.TLSNextProto, so srv must not
// serve elsewhere; it returns what srv.Serve returns, or at once the
// error of a file it cannot use.
//
// The file, and the certificate, key and client CA files it names, are
// stat'ed on every TLS handshake and every request and read again when
// one changed (inode, size or modification time), so a renewed
// certificate, a new CA, a new password, headers or rate limit need no
// restart. A file that becomes unusable is never served without: new
// handshakes fail and requests get 500, and logf gets one line (then one
// when it is usable again). A file that turns TLS on or off while serving
// counts as unusable, since the listener cannot change what it speaks;
// http2 is read at start only, as the toolkit does.
func Serve(ln net.Listener, srv *http.Server, path string, logf func(format string, args ...any)) error {
	if path == "" {
		return srv.Serve(ln)
	}
	// The file is read again for as long as the server runs: a later
	// change of the working directory must not move it.
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	start := time.Now()
	c, stamps, err := load(path)
	if err != nil {
		return err
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &server{
		path:    path,
		next:    srv.Handler,
		logf:    logf,
		srv:     srv,
		withTLS: c.tls != nil,
		http2:   c.http2,
		cache:   newAuthCache(),
	}
	if s.next == nil {
		s.next = http.DefaultServeMux
	}
	s.adopt(c, stamps, start, nil)
	srv.Handler = s
	if c.tls == nil {
		return srv.Serve(ln)
	}
	if !c.http2 {
		// net/http's way to leave HTTP/2 out: a non-nil map without "h2".
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	srv.TLSConfig = &tls.Config{GetConfigForClient: s.configForClient}
	return srv.ServeTLS(ln, "", "")
}

// errUnusable fails a handshake while the file cannot be used; the
// reason is in the log line adopt wrote.
var errUnusable = errors.New("web config file not usable (logged when it changed)")

// server applies the current file to each handshake and request.
type server struct {
	path    string
	next    http.Handler
	logf    func(format string, args ...any)
	srv     *http.Server
	withTLS bool // what the listener speaks, decided at start
	http2   bool // offered in TLS, decided at start

	cache *authCache
	// bcryptMu runs one bcrypt comparison at a time: each is tens of
	// milliseconds of CPU, and a flood of wrong passwords must not take
	// every core.
	bcryptMu sync.Mutex

	mu     sync.Mutex
	cur    *Config // nil while err is set
	err    error
	stamps []stamp // the files as they were when cur (or err) was read
	racy   bool    // stamps too fresh to trust: read again
	logged string  // the error last logged, "" while usable

	limiter       *rate.Limiter // nil: no limit
	limitInterval time.Duration
	limitBurst    int

	tlsFrom *Config     // the Config served was made from
	served  *tls.Config // cur's TLS with the server's ALPN protocols
}

// current returns the file's configuration and the rate limiter, reading
// the files again if one changed.
func (s *server) current() (*Config, *rate.Limiter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.racy || !unchanged(s.stamps) {
		start := time.Now()
		c, stamps, err := load(s.path)
		s.adopt(c, stamps, start, err)
	}
	return s.cur, s.limiter, s.err
}

// adopt makes a load's result current, logging a new error once and the
// return to a usable file, and follows a changed rate limit. s.mu is held
// (or s not yet shared).
func (s *server) adopt(c *Config, stamps []stamp, start time.Time, err error) {
	if err == nil && (c.tls != nil) != s.withTLS {
		c = nil
		if s.withTLS {
			err = errors.New("tls_server_config no longer asks for TLS: restart to serve plain HTTP")
		} else {
			err = errors.New("tls_server_config now asks for TLS: restart to serve HTTPS")
		}
	}
	s.cur, s.err, s.stamps, s.racy = c, err, stamps, racy(stamps, start)
	if err != nil {
		if msg := err.Error(); msg != s.logged {
			s.logf("web config file %s: %s; refusing requests until it is fixed", s.path, msg)
			s.logged = msg
		}
		return
	}
	if s.logged != "" {
		s.logf("web config file %s: usable again", s.path)
		s.logged = ""
	}
	if c.rateInterval != s.limitInterval || c.rateBurst != s.limitBurst {
		s.limitInterval, s.limitBurst = c.rateInterval, c.rateBurst
		s.limiter = nil
		if c.rateInterval > 0 {
			s.limiter = rate.NewLimiter(rate.Every(c.rateInterval), c.rateBurst)
		}
	}
}

// configForClient is the TLS configuration of one handshake: the current
// file's, so that a renewed certificate or CA applies to the next
// connection.
func (s *server) configForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	c, _, err := s.current()
	if err != nil {
		return nil, errUnusable
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tlsFrom != c {
		// The configuration a handshake gets replaces the server's, ALPN
		// included: offer h2 only where ServeTLS set HTTP/2 up (not with
		// http2: false, nor GODEBUG=http2server=0).
		cfg := c.tls.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		if s.http2 && s.srv.TLSNextProto["h2"] != nil {
			cfg.NextProtos = []string{"h2", "http/1.1"}
		}
		s.tlsFrom, s.served = c, cfg
	}
	return s.served, nil
}

// ServeHTTP answers 500 while the file is unusable, 429 beyond the rate
// limit and 401 without the right user and password; it sets the file's
// headers on every answer but the 500.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, limiter, err := s.current()
	if err != nil {
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	for _, h := range c.headers {
		w.Header().Set(h[0], h[1])
	}
	if limiter != nil && !limiter.Allow() {
		http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
		return
	}
	if len(c.users) > 0 && !s.authorized(c, r) {
		w.Header().Set("WWW-Authenticate", "Basic")
		http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
		return
	}
	s.next.ServeHTTP(w, r)
}

// authorized checks the request's basic auth against c's users. Every
// answer but a cached success costs one bcrypt comparison, an unknown user
// included (against the first user's hash, so of the cost the file uses),
// so that timing does not tell which users exist.
func (s *server) authorized(c *Config, r *http.Request) bool {
	name, password, ok := r.BasicAuth()
	if !ok {
		return false
	}
	sum := sha256.Sum256([]byte(name))
	var hash []byte
	for _, u := range c.users {
		if subtle.ConstantTimeCompare(sum[:], u.nameSum[:]) == 1 {
			hash = u.hash
		}
	}
	if hash == nil {
		_ = s.compare(c.users[0].hash, password)
		return false
	}
	key := s.cache.key(name, hash, password)
	if s.cache.has(key) {
		return true
	}
	if s.compare(hash, password) != nil {
		return false
	}
	s.cache.add(key)
	return true
}

func (s *server) compare(hash []byte, password string) error {
	s.bcryptMu.Lock()
	defer s.bcryptMu.Unlock()
	bcrypts.Add(1)
	return bcrypt.CompareHashAndPassword(hash, []byte(password))
}

// bcrypts counts the comparisons of every server in the process, for the
// tests that the cache spares them and an unknown user does not.
var bcrypts atomic.Int64

// authCacheSize bounds the successful checks kept: a few scrapers with a
// password each need a few entries; a client sending ever new passwords
// cannot grow it (only successes enter).
const authCacheSize = 64

// authCache remembers successful basic-auth checks, so that a scrape
// every 15 s does not cost a bcrypt comparison each. An entry is a keyed
// SHA-256 (HMAC with a secret made at start) of the user, the hash and
// the password: a new hash in the file misses it, and the memory holds
// neither the password nor a fast hash of it one could test guesses
// against.
type authCache struct {
	secret [32]byte
	mu     sync.Mutex
	ok     map[[32]byte]struct{}
}

func newAuthCache() *authCache {
	a := &authCache{ok: make(map[[32]byte]struct{})}
	_, _ = rand.Read(a.secret[:]) // never fails (crypto/rand)
	return a
}

func (a *authCache) key(name string, hash []byte, password string) [32]byte {
	m := hmac.New(sha256.New, a.secret[:])
	for _, field := range [][]byte{[]byte(name), hash, []byte(password)} {
		// Length-prefixed: ("ab", "c") and ("a", "bc") differ.
		_, _ = m.Write(binary.BigEndian.AppendUint64(nil, uint64(len(field))))
		_, _ = m.Write(field)
	}
	var k [32]byte
	m.Sum(k[:0])
	return k
}

func (a *authCache) has(k [32]byte) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.ok[k]
	return ok
}

func (a *authCache) add(k [32]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.ok) >= authCacheSize {
		for old := range a.ok { // any one: Go's map order varies
			delete(a.ok, old)
			break
		}
	}
	a.ok[k] = struct{}{}
}
