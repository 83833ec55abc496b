//go:build !nometrics

package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/bondtop/bondtop/internal/testcert"
)

// The credentials every web config file of these tests accepts.
const (
	webUser     = "prometheus"
	webPassword = "s3cret scrape"
)

// writeWebConfig writes, in a new directory, a certificate for 127.0.0.1
// and its key, the CA that signed it, and a web config file (the
// Prometheus exporter format) that serves TLS with them and asks for
// webUser's bcrypt-hashed password. The certificate paths are relative,
// as the format allows: relative to the config file's directory. It
// returns the config file and the CA's PEM file (a client's root).
func writeWebConfig(t *testing.T) (config, caFile string) {
	t.Helper()
	dir := t.TempDir()
	ca := testcert.NewCA(t, "bondtop test CA")
	server := testcert.Server(t, ca)
	hash, err := bcrypt.GenerateFromPassword([]byte(webPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(dir, "ca.crt")
	config = filepath.Join(dir, "web.yml")
	files := map[string][]byte{
		caFile:                            ca.CertPEM,
		filepath.Join(dir, "bondtop.crt"): server.CertPEM,
		filepath.Join(dir, "bondtop.key"): server.KeyPEM,
		config: fmt.Appendf(nil, `tls_server_config:
  cert_file: bondtop.crt
  key_file: bondtop.key
basic_auth_users:
  %s: %s
`, webUser, hash),
	}
	for name, content := range files {
		if err := os.WriteFile(name, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return config, caFile
}

// TestHeadlessMetricsTLSBasicAuth runs the real binary with a web config
// file: a scrape over TLS with the right credentials gets the metrics;
// wrong or no credentials get 401; plain HTTP gets no metrics.
func TestHeadlessMetricsTLSBasicAuth(t *testing.T) {
	config, caFile := writeWebConfig(t)
	pemCert, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemCert) {
		t.Fatal("test certificate not parsed")
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}

	addr := unusedLoopbackAddr(t)
	cmd := exec.Command(binary(t), "--demo", "--listen", addr, "--headless", "--interval", "100ms", "--web.config.file", config)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	get := func(method, url, user, password string) (int, string, error) {
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			return 0, "", err
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	https := "https://" + addr
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body, err := get("GET", https+"/metrics", webUser, webPassword)
		if err == nil && code == 200 && strings.Contains(body, "bondtop_slave_transmit_bytes_total{") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics over TLS within 10 s: %d %v %.300q; stderr: %s", code, err, body, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range []struct {
		method, path, user, password string
		status                       int
		body                         string
	}{
		{"GET", "/metrics", webUser, "wrong", http.StatusUnauthorized, ""},
		{"GET", "/metrics", "nobody", webPassword, http.StatusUnauthorized, ""},
		{"GET", "/metrics", "", "", http.StatusUnauthorized, ""},
		{"GET", "/", "", "", http.StatusUnauthorized, ""},
		{"GET", "/", webUser, webPassword, 200, `href="/metrics"`},
		{"GET", "/-/healthy", webUser, webPassword, 200, "OK"},
		{"POST", "/metrics", webUser, webPassword, http.StatusMethodNotAllowed, ""},
	} {
		code, body, err := get(c.method, https+c.path, c.user, c.password)
		if err != nil || code != c.status || !strings.Contains(body, c.body) {
			t.Errorf("%s %s as %q/%q: %d %v %.200q, want %d", c.method, c.path, c.user, c.password, code, err, body, c.status)
		}
		if code != 200 && strings.Contains(body, "bondtop_") {
			t.Errorf("%s %s as %q/%q: refused but answered metrics", c.method, c.path, c.user, c.password)
		}
	}
	// Plain HTTP to the TLS port: Go's TLS server answers 400 to an HTTP
	// request, or the connection fails; never metrics.
	resp, err := http.Get("http://" + addr + "/metrics")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || strings.Contains(string(b), "bondtop_") {
			t.Errorf("plain HTTP to the TLS port: %d %.200q", resp.StatusCode, b)
		}
	}
	// Scanners speaking plain HTTP cannot flood the log: ten lines, then
	// one every two seconds.
	for range 30 {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			resp.Body.Close()
		}
	}
	// A client that does not trust the certificate does not get through.
	if _, err := http.Get(https + "/metrics"); err == nil {
		t.Error("a client without the CA completed the TLS handshake")
	}

	// Broken while bondtop runs, the file is not taken: the last good
	// one stays in force, its protection included, and the log says so.
	if err := os.WriteFile(config, []byte("tls_server_config: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	client.CloseIdleConnections()
	if code, body, err := get("GET", https+"/metrics", "", ""); err != nil || code != http.StatusUnauthorized || strings.Contains(body, "bondtop_") {
		t.Errorf("a broken web config file: without credentials %d %v %.200q, want 401", code, err, body)
	}
	if code, _, err := get("GET", https+"/metrics", webUser, webPassword); err != nil || code != 200 {
		t.Errorf("a broken web config file: the last good one does not serve: %d %v", code, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v; stderr: %s", err, stderr.String())
	}
	for _, want := range []string{"serving metrics on https://" + addr + "/metrics", "the last good one stays in force"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	if n := strings.Count(stderr.String(), "TLS handshake error"); n < 1 || n > 13 {
		t.Errorf("%d failed handshakes logged of 32, want 1 to 13 (a burst of 10, then one every 2 s):\n%s", n, stderr.String())
	}
}

// TestWebConfigFileErrors: a web config file the server could not use
// stops bondtop at start, before it listens or samples, with the usage
// errors' exit code and a message naming the file.
func TestWebConfigFileErrors(t *testing.T) {
	good, _ := writeWebConfig(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	addr := unusedLoopbackAddr(t)
	for _, c := range []struct {
		name, file, want string
		args             []string
	}{
		{"missing file", filepath.Join(dir, "absent.yml"), "no such file", nil},
		{"not YAML", write("garbage.yml", "tls_server_config: [\x1b[2J\n"), "yaml", nil},
		{"unknown key", write("typo.yml", "tls_server_config:\n  cert_fil: a.crt\n  key_file: a.key\n"), "cert_fil", nil},
		{"password not hashed", write("plain.yml", "basic_auth_users:\n  prometheus: s3cret\n"), "bcrypt", nil},
		{"certificate absent", write("nocert.yml", "tls_server_config:\n  cert_file: absent.crt\n  key_file: absent.key\n"), "absent.crt", nil},
		{"key without certificate", write("nokey.yml", "tls_server_config:\n  key_file: a.key\n"), "cert", nil},
		{"without --listen", good, "needs --listen", []string{"--demo", "--once", "--web.config.file", good}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if args == nil {
				args = []string{"--demo", "--listen", addr, "--headless", "--web.config.file", c.file}
			}
			_, stderr, code := runBinary(t, args...)
			if code != exitUsage || !strings.Contains(stderr, "--web.config.file") || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d naming --web.config.file and %q", code, stderr, exitUsage, c.want)
			}
			if c.args == nil && !strings.Contains(stderr, c.file) {
				t.Errorf("stderr %q does not name %s", stderr, c.file)
			}
			if strings.Contains(stderr, "\x1b") {
				t.Errorf("stderr passes a control character through: %q", stderr)
			}
			if strings.Contains(stderr, "serving metrics") {
				t.Errorf("served despite the bad file: %q", stderr)
			}
		})
	}
}

// TestRealPrometheusTLSBasicAuth has Debian's Prometheus scrape bondtop
// over TLS with basic auth, configured as docs/web-config.md says: with the CA
// and the password the target is up and bondtop's series arrive; a job
// with a wrong password sees the target down.
func TestRealPrometheusTLSBasicAuth(t *testing.T) {
	config, caFile := writeWebConfig(t)
	target := unusedLoopbackAddr(t)
	bondtop := exec.Command(binary(t), "--demo", "--headless", "--listen", target, "--interval", "200ms", "--web.config.file", config)
	var stderr lockedLog
	bondtop.Stderr = &stderr
	if err := bondtop.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bondtop.Process.Signal(syscall.SIGTERM); _ = bondtop.Wait() }()

	job := func(name, password string) string {
		return fmt.Sprintf(`  - job_name: %s
    scheme: https
    tls_config:
      ca_file: %q
    basic_auth:
      username: %s
      password: %q
    static_configs:
      - targets: [%q]
`, name, caFile, webUser, password, target)
	}
	prom := startPrometheus(t, "global:\n  scrape_interval: 1s\nscrape_configs:\n"+
		job("bondtop", webPassword)+job("wrongpassword", "wrong"))
	want := demoSlaves(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		up, _ := prom.query(`up{job="bondtop"} == 1`)
		slaves, _ := prom.query(`bondtop_slave_up{job="bondtop"}`)
		refused, _ := prom.query(`up{job="wrongpassword"} == 0`)
		leaked, _ := prom.query(`bondtop_slave_up{job="wrongpassword"}`)
		if leaked != 0 {
			t.Fatalf("a wrong password got %d slave series", leaked)
		}
		if up == 1 && slaves == want && refused == 1 {
			break
		}
		if time.Now().After(deadline) {
			var targets any
			_ = prom.api("/api/v1/targets", &targets)
			t.Fatalf("after 30 s: up %d, slave series %d, wrong password refused %d\ntargets: %v\nprometheus log:\n%s\nbondtop stderr:\n%s",
				up, slaves, refused, targets, prom.log.String(), stderr.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestWebConfigOtherExportersAccept: web config files that the exporter
// toolkit accepts (so node_exporter, sharing a host's web.yml, starts
// with them) start bondtop too, which serves them as the toolkit does and
// names at start what protects less than it seems.
func TestWebConfigOtherExportersAccept(t *testing.T) {
	config, caFile := writeWebConfig(t)
	dir := filepath.Dir(config)
	base, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	tlsPart, usersPart, _ := strings.Cut(string(base), "basic_auth_users:")
	usersPart = "basic_auth_users:" + usersPart
	pemCert, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemCert)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	for _, c := range []struct {
		name, content, warning string
		status                 int
	}{
		{"client CA with RequestClientCert", tlsPart + "  client_ca_file: ca.crt\n  client_auth_type: RequestClientCert\n" + usersPart, "without a certificate is let in", 200},
		{"VerifyClientCertIfGiven without a CA", tlsPart + "  client_auth_type: VerifyClientCertIfGiven\n" + usersPart, "public CAs", 200},
		{"client_allowed_sans without verification", tlsPart + "  client_auth_type: RequestClientCert\n  client_allowed_sans: [prometheus.example]\n" + usersPart, "nobody verifies", 0},
		{"rate_limit burst 0", tlsPart + usersPart + "rate_limit:\n  interval: 1s\n  burst: 0\n", "burst 0", http.StatusTooManyRequests},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".yml")
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			addr := unusedLoopbackAddr(t)
			cmd := exec.Command(binary(t), "--demo", "--listen", addr, "--headless", "--web.config.file", path)
			var stderr syncBuilder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(stderr.String(), "serving metrics on https://") || !strings.Contains(stderr.String(), c.warning) {
				if time.Now().After(deadline) || cmd.ProcessState != nil {
					t.Fatalf("bondtop did not start with a file the toolkit accepts, or did not warn %q:\n%s", c.warning, stderr.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			req, _ := http.NewRequest("GET", "https://"+addr+"/metrics", nil)
			req.SetBasicAuth(webUser, webPassword)
			resp, err := client.Do(req)
			code := 0
			if err == nil {
				code = resp.StatusCode
				resp.Body.Close()
			}
			if c.status != 0 && code != c.status {
				t.Errorf("a scrape: %d %v, want %d", code, err, c.status)
			}
		})
	}
}

// syncBuilder is a strings.Builder that a process's output and a test
// may use at once.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
