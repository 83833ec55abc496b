package webguard

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/bondtop/bondtop/internal/testcert"
)

const (
	user     = "prometheus"
	password = "s3cret scrape"
)

// pki is a CA, a server certificate for 127.0.0.1 signed by it, written
// into dir, and a client trusting it.
type pki struct {
	dir    string
	ca     *testcert.KeyPair
	roots  *x509.CertPool
	hash   string // bcrypt of password, at the lowest cost
	client *http.Client
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir(), ca: testcert.NewCA(t, "webguard test CA")}
	server := testcert.Server(t, p.ca)
	for name, b := range map[string][]byte{"ca.crt": p.ca.CertPEM, "server.crt": server.CertPEM, "server.key": server.KeyPEM} {
		if err := os.WriteFile(filepath.Join(p.dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The lowest cost: tests run under the race detector, where a check
	// of the usual cost takes seconds. The flood test makes its own.
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	p.hash = string(h)
	p.roots = x509.NewCertPool()
	p.roots.AppendCertsFromPEM(p.ca.CertPEM)
	p.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.roots}}}
	return p
}

// write writes a web config file named name into the PKI's directory.
func (p *pki) write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// tlsUsers is a web config with TLS and basic auth.
func (p *pki) tlsUsers() string {
	return fmt.Sprintf("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  %s: %s\n", user, p.hash)
}

var (
	trackersMu sync.Mutex
	trackers   = map[*http.Server]*connTracker{}
)

func init() {
	testHook = func(s *http.Server, t *connTracker) {
		trackersMu.Lock()
		trackers[s] = t
		trackersMu.Unlock()
	}
}

func (s *server) tracker() *connTracker {
	trackersMu.Lock()
	defer trackersMu.Unlock()
	return trackers[s.srv]
}

// server is a running Serve.
type server struct {
	addr string
	srv  *http.Server
	done chan error
	log  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(b)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serve runs Serve on a loopback port with a handler that answers
// "metrics", until the test ends.
func serve(t *testing.T, o Options) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{addr: ln.Addr().String(), done: make(chan error, 1), log: &syncBuffer{}}
	o.Log = s.log
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "metrics\n")
		}),
		ReadHeaderTimeout: 3 * time.Second,
		IdleTimeout:       30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { s.done <- Serve(ln, s.srv, o) }()
	t.Cleanup(func() {
		s.srv.Close()
		<-s.done
	})
	return s
}

// get does one request on client and returns the status and body.
func get(client *http.Client, url, u, pw string) (int, string, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return 0, "", err
	}
	if u != "" {
		req.SetBasicAuth(u, pw)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// waitFor polls cond for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
