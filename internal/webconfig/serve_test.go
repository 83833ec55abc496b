package webconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bondtop/bondtop/internal/testcert"
)

// logLines collects what Serve logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// count is how many lines hold s.
func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// served is a running Serve of a web config file: its address and log.
type served struct {
	addr string
	logs *logLines
	srv  *http.Server
}

// serve runs Serve on a loopback port with the config file at path, in
// front of a handler that answers "ok" and the protocol, until the test
// ends.
func serve(t *testing.T, path string) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &served{addr: ln.Addr().String(), logs: &logLines{}}
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "ok %s", r.Proto)
		}),
		ErrorLog: log.New(io.Discard, "", 0),
	}
	errc := make(chan error, 1)
	go func() { errc <- Serve(ln, s.srv, path, s.logs.logf) }()
	t.Cleanup(func() {
		s.srv.Close()
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

// client is an HTTP client trusting roots (none: the system's), with
// certs as its client certificates, that offers HTTP/2, and opens a
// connection per request unless keepAlive.
func client(roots *x509.CertPool, keepAlive bool, certs ...tls.Certificate) *http.Client {
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: roots, Certificates: certs},
			ForceAttemptHTTP2: true,
			DisableKeepAlives: !keepAlive,
		},
	}
}

func pool(cas ...*testcert.KeyPair) *x509.CertPool {
	p := x509.NewCertPool()
	for _, ca := range cas {
		p.AddCert(ca.Cert)
	}
	return p
}

// answer is a response, read.
type answer struct {
	code   int
	body   string
	header http.Header
	tls    *tls.ConnectionState
	reused bool // the request went over a connection already open
}

// get requests url as user with password (no Authorization without a
// user).
func get(c *http.Client, url, user, password string) (answer, error) {
	var a answer
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return a, err
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { a.reused = info.Reused },
	}))
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := c.Do(req)
	if err != nil {
		return a, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a.code, a.body, a.header, a.tls = resp.StatusCode, string(b), resp.Header, resp.TLS
	return a, err
}

// TestBasicAuth: the right user and password get through on every path;
// a wrong password, an unknown user or none get 401 asking for Basic. A
// success is cached, an unknown user costs a bcrypt comparison all the
// same, and a cached success lets no wrong password through.
func TestBasicAuth(t *testing.T) {
	f := newFixture(t)
	s := serve(t, f.config(t, "basic_auth_users:\n  alice: "+hash(t, "right")+"\n  bob: "+hash(t, "bobs")+"\n"))
	c := client(nil, true)
	base := "http://" + s.addr
	want := func(path, user, password string, code int, compares int64) {
		t.Helper()
		before := bcrypts.Load()
		a, err := get(c, base+path, user, password)
		if err != nil {
			t.Fatalf("%s as %q/%q: %v", path, user, password, err)
		}
		if a.code != code {
			t.Errorf("%s as %q/%q: %d %q, want %d", path, user, password, a.code, a.body, code)
		}
		if code == http.StatusUnauthorized && a.header.Get("WWW-Authenticate") != "Basic" {
			t.Errorf("%s as %q/%q: WWW-Authenticate %q, want Basic", path, user, password, a.header.Get("WWW-Authenticate"))
		}
		if code != http.StatusOK && strings.HasPrefix(a.body, "ok") {
			t.Errorf("%s as %q/%q: refused, yet the handler answered", path, user, password)
		}
		if n := bcrypts.Load() - before; n != compares {
			t.Errorf("%s as %q/%q: %d bcrypt comparisons, want %d", path, user, password, n, compares)
		}
	}
	for _, path := range []string{"/", "/metrics", "/-/healthy"} {
		want(path, "", "", 401, 0)
	}
	want("/metrics", "alice", "wrong", 401, 1)
	want("/metrics", "alice", "right", 200, 1)
	want("/metrics", "alice", "right", 200, 0) // cached
	want("/-/healthy", "alice", "right", 200, 0)
	want("/metrics", "alice", "wrong", 401, 1) // after a cached success
	want("/metrics", "alice", "righ", 401, 1)
	want("/metrics", "alice", "right ", 401, 1)
	want("/metrics", "bob", "right", 401, 1) // alice's password is not bob's
	want("/metrics", "bob", "bobs", 200, 1)
	want("/metrics", "mallory", "right", 401, 1) // unknown: a comparison all the same
	want("/metrics", "mallory", "right", 401, 1) // and never cached
	want("/metrics", "Alice", "right", 401, 1)
	want("/metrics", "alice\x00", "right", 401, 1)

	// A new hash in the file misses the cache: the old password is out.
	f.config(t, "basic_auth_users:\n  alice: "+hash(t, "new")+"\n")
	want("/metrics", "alice", "right", 401, 1)
	want("/metrics", "alice", "new", 200, 1)
}

// TestAuthCacheBounded: ever new successful passwords do not grow the
// cache beyond its bound.
func TestAuthCacheBounded(t *testing.T) {
	a := newAuthCache()
	for i := range 3 * authCacheSize {
		a.add(a.key("u", []byte("h"), fmt.Sprint(i)))
	}
	if len(a.ok) != authCacheSize {
		t.Errorf("%d entries, want %d", len(a.ok), authCacheSize)
	}
	if a.key("ab", []byte("c"), "d") == a.key("a", []byte("bc"), "d") {
		t.Error("fields run together in the key")
	}
	if b := newAuthCache(); b.key("u", []byte("h"), "p") == a.key("u", []byte("h"), "p") {
		t.Error("two caches key alike: the key is not secret")
	}
}

// TestTLS: a client that trusts the certificate gets through; one that
// does not, or speaks plain HTTP to the port, gets nothing.
func TestTLS(t *testing.T) {
	f := newFixture(t)
	s := serve(t, f.config(t, tlsFiles))
	a, err := get(client(pool(f.ca), false), "https://"+s.addr+"/metrics", "", "")
	if err != nil || a.code != 200 || a.tls == nil {
		t.Fatalf("a client trusting the CA: %+v %v", a, err)
	}
	if got := a.tls.PeerCertificates[0].SerialNumber; got.Cmp(f.server.Cert.SerialNumber) != 0 {
		t.Errorf("served certificate %v, want server.crt's %v", got, f.server.Cert.SerialNumber)
	}
	if _, err := get(client(pool(testcert.NewCA(t, "another CA")), false), "https://"+s.addr+"/metrics", "", ""); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client trusting another CA: %v, want a certificate error", err)
	}
	if a, err := get(client(nil, false), "http://"+s.addr+"/metrics", "", ""); err == nil && (a.code == 200 || strings.HasPrefix(a.body, "ok")) {
		t.Errorf("plain HTTP to the TLS port: %d %q", a.code, a.body)
	}
}

// TestMutualTLS: with RequireAndVerifyClientCert and client_ca_file, a
// client certificate signed by that CA gets through; none, or one signed
// by another CA, does not.
func TestMutualTLS(t *testing.T) {
	f := newFixture(t)
	clients := testcert.NewCA(t, "scrapers' CA")
	writeFile(t, f.dir, "tls/clients.crt", clients.CertPEM)
	s := serve(t, f.config(t, tlsFiles+"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: tls/clients.crt\n"))
	url := "https://" + s.addr + "/metrics"
	a, err := get(client(pool(f.ca), false, testcert.Client(t, clients, "scraper.example").TLS(t)), url, "", "")
	if err != nil || a.code != 200 {
		t.Fatalf("a client certificate of the CA: %d %q %v", a.code, a.body, err)
	}
	if a, err := get(client(pool(f.ca), false), url, "", ""); err == nil {
		t.Errorf("no client certificate: %d %q", a.code, a.body)
	}
	// The server's own CA is not the clients' CA.
	if a, err := get(client(pool(f.ca), false, testcert.Client(t, f.ca, "scraper.example").TLS(t)), url, "", ""); err == nil {
		t.Errorf("a client certificate of another CA: %d %q", a.code, a.body)
	}
}

// TestClientAllowedSANs: a verified client certificate gets through only
// with one of the listed SANs, of any kind; with VerifyClientCertIfGiven
// a client without a certificate does not get past the list either.
func TestClientAllowedSANs(t *testing.T) {
	for _, authType := range []string{"RequireAndVerifyClientCert", "VerifyClientCertIfGiven"} {
		t.Run(authType, func(t *testing.T) {
			f := newFixture(t)
			s := serve(t, f.config(t, tlsFiles+"  client_auth_type: "+authType+"\n  client_ca_file: tls/ca.crt\n"+
				"  client_allowed_sans: [scraper.example, 10.0.0.7, prometheus@example.org, 'spiffe://example.org/prometheus']\n"))
			url := "https://" + s.addr + "/metrics"
			for _, c := range []struct {
				sans []string
				ok   bool
			}{
				{[]string{"scraper.example"}, true},
				{[]string{"10.0.0.7"}, true},
				{[]string{"prometheus@example.org"}, true},
				{[]string{"spiffe://example.org/prometheus"}, true},
				{[]string{"other.example", "scraper.example"}, true},
				{[]string{"other.example"}, false},
				{[]string{"10.0.0.8", "scraper.example.org", "sub.scraper.example"}, false},
				{[]string{"spiffe://example.org/prometheus/x"}, false},
				{nil, false},
			} {
				var certs []tls.Certificate
				if c.sans != nil {
					certs = append(certs, testcert.Client(t, f.ca, c.sans...).TLS(t))
				}
				a, err := get(client(pool(f.ca), false, certs...), url, "", "")
				if ok := err == nil && a.code == 200; ok != c.ok {
					t.Errorf("client certificate with %q: %d %v, want through %v", c.sans, a.code, err, c.ok)
				}
			}
		})
	}
}

// TestMinVersion: min_version TLS13 refuses a client that speaks TLS 1.2
// at most, which the default (TLS12) lets in.
func TestMinVersion(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		extra string
		ok12  bool
	}{{"", true}, {"  min_version: TLS13\n", false}} {
		s := serve(t, f.config(t, tlsFiles+c.extra))
		tls12 := client(pool(f.ca), false)
		tls12.Transport.(*http.Transport).TLSClientConfig.MaxVersion = tls.VersionTLS12
		a, err := get(tls12, "https://"+s.addr+"/", "", "")
		if ok := err == nil && a.code == 200 && a.tls.Version == tls.VersionTLS12; ok != c.ok12 {
			t.Errorf("%q: a TLS 1.2 client: %d %v, want through %v", c.extra, a.code, err, c.ok12)
		}
		if a, err := get(client(pool(f.ca), false), "https://"+s.addr+"/", "", ""); err != nil || a.tls.Version != tls.VersionTLS13 {
			t.Errorf("%q: a TLS 1.3 client: %v", c.extra, err)
		}
	}
}

// TestCertificateRotation: certificate and key replaced while serving,
// the config file untouched: the next connection gets the new
// certificate, whether the files were renamed into place (a new inode) or
// rewritten in place at once (the same inode, maybe the same size and
// modification time).
func TestCertificateRotation(t *testing.T) {
	f := newFixture(t)
	s := serve(t, f.config(t, tlsFiles))
	c := client(pool(f.ca), false)
	serial := func() *big.Int {
		t.Helper()
		a, err := get(c, "https://"+s.addr+"/", "", "")
		if err != nil || a.code != 200 {
			t.Fatalf("%d %v; log:\n%s", a.code, err, s.logs)
		}
		return a.tls.PeerCertificates[0].SerialNumber
	}
	if got := serial(); got.Cmp(f.server.Cert.SerialNumber) != 0 {
		t.Fatalf("serving %v, want %v", got, f.server.Cert.SerialNumber)
	}

	renamed := testcert.Server(t, f.ca)
	for name, content := range map[string][]byte{"server.crt": renamed.CertPEM, "server.key": renamed.KeyPEM} {
		writeFile(t, f.dir, "tls/new-"+name, content)
		if err := os.Rename(filepath.Join(f.dir, "tls/new-"+name), filepath.Join(f.dir, "tls", name)); err != nil {
			t.Fatal(err)
		}
	}
	if got := serial(); got.Cmp(renamed.Cert.SerialNumber) != 0 {
		t.Errorf("after a rename: serving %v, want the new %v", got, renamed.Cert.SerialNumber)
	}

	// Rewritten in place within the file system's clock tick: the same
	// inode, size and modification time as the files just read. Only
	// their being too fresh to trust makes the server read them again.
	for i := range 3 {
		crt, key := filepath.Join(f.dir, "tls/server.crt"), filepath.Join(f.dir, "tls/server.key")
		inPlace := sameSize(t, f.ca, crt, key)
		for name, content := range map[string][]byte{crt: inPlace.CertPEM, key: inPlace.KeyPEM} {
			before, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, content, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(name, before.ModTime(), before.ModTime()); err != nil {
				t.Fatal(err)
			}
			if after, err := os.Stat(name); err != nil || stampOf(name, after, nil) != stampOf(name, before, nil) {
				t.Fatalf("%s: the stamp changed (%v), the test proves nothing", name, err)
			}
		}
		if got := serial(); got.Cmp(inPlace.Cert.SerialNumber) != 0 {
			t.Errorf("after rewrite %d in place: serving %v, want the new %v", i, got, inPlace.Cert.SerialNumber)
		}
	}
}

// sameSize is a new server certificate whose PEM files are as long as
// those at crt and key (the certificate padded after its PEM block).
func sameSize(t *testing.T, ca *testcert.KeyPair, crt, key string) *testcert.KeyPair {
	t.Helper()
	oldCrt, err := os.ReadFile(crt)
	if err != nil {
		t.Fatal(err)
	}
	oldKey, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		k := testcert.Server(t, ca)
		if len(k.KeyPEM) != len(oldKey) || len(k.CertPEM) > len(oldCrt) {
			continue
		}
		k.CertPEM = append(k.CertPEM, strings.Repeat("\n", len(oldCrt)-len(k.CertPEM))...)
		return k
	}
	t.Fatal("no certificate of the same size in 100")
	return nil
}

// TestBrokenWhileRunning: a file made unusable while serving refuses
// (500 on a connection already open, a failed handshake on a new one) and
// is logged once; made usable again, it serves again.
func TestBrokenWhileRunning(t *testing.T) {
	f := newFixture(t)
	good := tlsFiles + "basic_auth_users:\n  alice: " + hash(t, "right") + "\n"
	config := f.config(t, good)
	s := serve(t, config)
	url := "https://" + s.addr + "/metrics"
	open := client(pool(f.ca), true)
	if a, err := get(open, url, "alice", "right"); err != nil || a.code != 200 {
		t.Fatalf("%d %v", a.code, err)
	}

	for _, broken := range []string{
		"tls_server_config: [\n",
		"basic_auth_users:\n  alice: right\n",
		strings.Replace(good, "server.key", "absent.key", 1),
		"basic_auth_users:\n  alice: " + hash(t, "right") + "\n", // TLS off: the listener cannot follow
	} {
		f.config(t, broken)
		for range 3 {
			a, err := get(open, url, "alice", "right")
			if err != nil || a.code != 500 || !a.reused || strings.HasPrefix(a.body, "ok") {
				t.Errorf("%q, on the open connection: %d %q %v (reused %v), want 500", broken, a.code, a.body, err, a.reused)
			}
			if a, err := get(client(pool(f.ca), false), url, "alice", "right"); err == nil {
				t.Errorf("%q, a new connection: %d %q, want a failed handshake", broken, a.code, a.body)
			}
		}
	}
	if n := s.logs.count("refusing requests"); n != 4 {
		t.Errorf("%d lines about 4 broken files of 6 requests each, want 4:\n%s", n, s.logs)
	}
	if !strings.Contains(s.logs.String(), "no longer asks for TLS") {
		t.Errorf("TLS turned off is not logged as such:\n%s", s.logs)
	}

	f.config(t, good)
	if a, err := get(client(pool(f.ca), false), url, "alice", "right"); err != nil || a.code != 200 {
		t.Errorf("fixed again: %d %v", a.code, err)
	}
	if n := s.logs.count("usable again"); n != 1 {
		t.Errorf("%d lines saying it is usable again, want 1:\n%s", n, s.logs)
	}
}

// TestTLSTurnedOnWhileRunning: a plain HTTP server whose file now asks
// for TLS refuses rather than go on in the clear.
func TestTLSTurnedOnWhileRunning(t *testing.T) {
	f := newFixture(t)
	config := f.config(t, "")
	s := serve(t, config)
	c := client(nil, false)
	if a, err := get(c, "http://"+s.addr+"/", "", ""); err != nil || a.code != 200 {
		t.Fatalf("%d %v", a.code, err)
	}
	f.config(t, tlsFiles)
	if a, err := get(c, "http://"+s.addr+"/", "", ""); err != nil || a.code != 500 {
		t.Errorf("TLS turned on: %d %q %v, want 500", a.code, a.body, err)
	}
}

// TestHeaders: the file's headers are on every answer, a refusal too,
// and follow the file.
func TestHeaders(t *testing.T) {
	f := newFixture(t)
	s := serve(t, f.config(t, "http_server_config:\n  headers:\n    X-Frame-Options: deny\n    Content-Security-Policy: \"default-src 'none'\"\n"+
		"basic_auth_users:\n  alice: "+hash(t, "right")+"\n"))
	c := client(nil, false)
	for _, user := range []string{"alice", ""} {
		a, err := get(c, "http://"+s.addr+"/", user, "right")
		if err != nil {
			t.Fatal(err)
		}
		if a.header.Get("X-Frame-Options") != "deny" || a.header.Get("Content-Security-Policy") != "default-src 'none'" {
			t.Errorf("as %q (%d): headers %v", user, a.code, a.header)
		}
	}
	f.config(t, "http_server_config:\n  headers:\n    X-Frame-Options: sameorigin\n")
	if a, err := get(c, "http://"+s.addr+"/", "", ""); err != nil || a.code != 200 ||
		a.header.Get("X-Frame-Options") != "sameorigin" || a.header.Get("Content-Security-Policy") != "" {
		t.Errorf("changed file: %d %v %v", a.code, a.header, err)
	}
}

// TestHTTP2: a client offering h2 gets HTTP/2 by default, and HTTP/1.1
// with http2: false.
func TestHTTP2(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		extra, proto string
	}{
		{"", "HTTP/2.0"},
		{"http_server_config:\n  http2: true\n", "HTTP/2.0"},
		{"http_server_config:\n  http2: false\n", "HTTP/1.1"},
	} {
		s := serve(t, f.config(t, tlsFiles+c.extra))
		a, err := get(client(pool(f.ca), false), "https://"+s.addr+"/", "", "")
		if err != nil || a.body != "ok "+c.proto {
			t.Errorf("%q: %q %v, want %s", c.extra, a.body, err, c.proto)
			continue
		}
		if want := map[string]string{"HTTP/2.0": "h2", "HTTP/1.1": "http/1.1"}[c.proto]; a.tls.NegotiatedProtocol != want {
			t.Errorf("%q: ALPN %q, want %q", c.extra, a.tls.NegotiatedProtocol, want)
		}
	}
}

// TestRateLimit: beyond the burst, 429 (authorized or not), and the
// limit follows the file.
func TestRateLimit(t *testing.T) {
	f := newFixture(t)
	s := serve(t, f.config(t, "rate_limit:\n  interval: 1h\n  burst: 3\n"))
	c := client(nil, true)
	for i := range 5 {
		a, err := get(c, "http://"+s.addr+"/", "", "")
		want := 200
		if i >= 3 {
			want = http.StatusTooManyRequests
		}
		if err != nil || a.code != want {
			t.Errorf("request %d: %d %v, want %d", i+1, a.code, err, want)
		}
	}
	f.config(t, "rate_limit:\n  interval: 0\n")
	if a, err := get(c, "http://"+s.addr+"/", "", ""); err != nil || a.code != 200 {
		t.Errorf("limit removed: %d %v", a.code, err)
	}
}

// TestServeUnusableAtStart: Serve refuses a file it cannot use before it
// serves anything.
func TestServeUnusableAtStart(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = Serve(ln, &http.Server{}, f.config(t, "basic_auth_users:\n  a: b\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "bcrypt") {
		t.Errorf("Serve: %v, want the bcrypt error", err)
	}
}
