//go:build !nometrics

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector/demo"
)

// unusedLoopbackAddr returns a loopback address nobody listens on.
func unusedLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// prometheusServer is a running Debian Prometheus, queried through its
// HTTP API.
type prometheusServer struct {
	addr string
	log  *lockedLog
	stop func() // ends it before the test does; the test's end calls it too
}

// lockedLog collects a child process's output, which its copying
// goroutine writes while the test may read it for a failure message.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// demoSlaves is how many slaves and members the demo's bonds have: one
// series each per slave metric.
func demoSlaves(t *testing.T) int {
	t.Helper()
	r, err := demo.New(nil).Read()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range r.Bonds {
		n += len(b.Slaves)
	}
	return n
}

// startPrometheus runs Debian's Prometheus with config (a prometheus.yml)
// until the test ends; it fails the test under CI=true, and skips it
// elsewhere, when prometheus is not installed.
func startPrometheus(t *testing.T, config string) *prometheusServer {
	t.Helper()
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus is missing (scripts/test-deps.sh installs Debian's prometheus package)")
		}
		t.Skip("prometheus is missing: run scripts/test-deps.sh")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &prometheusServer{addr: unusedLoopbackAddr(t), log: &lockedLog{}}
	p := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+s.addr, "--log.level=warn")
	p.Stdout, p.Stderr = s.log, s.log
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	s.stop = func() { once.Do(func() { _ = p.Process.Signal(syscall.SIGTERM); _ = p.Wait() }) }
	t.Cleanup(s.stop)
	return s
}

// api decodes the JSON answer of Prometheus's path into out.
func (s *prometheusServer) api(path string, out any) error {
	resp, err := http.Get("http://" + s.addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// query returns how many series the instant query q gives.
func (s *prometheusServer) query(q string) (int, error) {
	var r struct {
		Data struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	err := s.api("/api/v1/query?query="+url.QueryEscape(q), &r)
	return len(r.Data.Result), err
}

// TestRealPrometheus has Debian's Prometheus scrape `bondtop --demo
// --headless` with the shipped rules loaded, as docs/prometheus.md's
// config does: the target is up, bondtop's series arrive, and every shipped rule
// evaluates without an error (a many-to-many match or a bad template
// shows only there).
func TestRealPrometheus(t *testing.T) {
	rules, err := filepath.Abs("../../contrib/prometheus/bondtop.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	target := unusedLoopbackAddr(t)
	bondtop := exec.Command(binary(t), "--demo", "--headless", "--listen", target, "--interval", "200ms")
	if err := bondtop.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bondtop.Process.Signal(syscall.SIGTERM); _ = bondtop.Wait() }()

	prom := startPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: bondtop
    static_configs:
      - targets: [%q]
`, rules, target))
	api, query, log := prom.api, prom.query, prom.log
	type rule struct {
		Name      string `json:"name"`
		Health    string `json:"health"`
		LastError string `json:"lastError"`
	}
	var rulesOK []rule
	want := demoSlaves(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		up, _ := query(`up{job="bondtop"} == 1`)
		slaves, _ := query(`bondtop_slave_up`)
		var r struct {
			Data struct {
				Groups []struct {
					Rules []rule `json:"rules"`
				} `json:"groups"`
			} `json:"data"`
		}
		_ = api("/api/v1/rules", &r)
		rulesOK = rulesOK[:0]
		evaluated := 0
		for _, g := range r.Data.Groups {
			for _, ru := range g.Rules {
				rulesOK = append(rulesOK, ru)
				if ru.Health == "ok" {
					evaluated++
				}
			}
		}
		if up == 1 && slaves == want && evaluated == 12 { // the rules file: 4 records, 8 alerts
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: up %d, slave series %d, rules %+v\nprometheus log:\n%s", up, slaves, rulesOK, log.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, ru := range rulesOK {
		if ru.Health != "ok" || ru.LastError != "" {
			t.Errorf("rule %s: %s %s", ru.Name, ru.Health, ru.LastError)
		}
	}
	if n, err := query(`bondtop_build_info`); n != 1 || err != nil {
		t.Errorf("build_info: %d series, %v", n, err)
	}
}

// scrapeMetricsText fetches addr's /metrics; "" while it does not answer.
func scrapeMetricsText(addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	return b.String()
}

// TestHeadlessDriverGone: the real binary serving a --root tree whose
// bonding driver goes away says so (a counted sample error, the bond
// present 0, no bonds) instead of answering with nothing.
func TestHeadlessDriverGone(t *testing.T) {
	root := t.TempDir()
	capture, err := os.ReadFile("../../bonding/testdata/proc/8023ad-6.8-healthy-root.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "proc/net/bonding")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bond0"), capture, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := unusedLoopbackAddr(t)
	cmd := exec.Command(binary(t), "--root", root, "--headless", "--listen", addr, "--interval", "100ms")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			body := scrapeMetricsText(addr)
			if ok(body) {
				return body
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 10 s; last scrape:\n%s", what, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("bond", func(b string) bool { return strings.Contains(b, `bondtop_bond_present{bond="bond0"} 1`) })
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	body := waitFor("driver loss", func(b string) bool {
		return strings.Contains(b, `bondtop_bond_present{bond="bond0"} 0`) && !strings.Contains(b, `bondtop_sample_errors_total{kind="no_bonding_driver"} 0`)
	})
	for _, want := range []string{"bondtop_bonds 0", "bondtop_read_success 1", "bondtop_last_sample_timestamp_seconds "} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q after the driver left:\n%s", want, body)
		}
	}
}
