package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// freePort returns a loopback address nobody listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestRealPrometheus has Debian's Prometheus scrape `bondtop --demo
// --headless` with the shipped rules loaded, as the README's config
// does: the target is up, bondtop's series arrive, and every shipped rule
// evaluates without an error (a many-to-many match or a bad template
// shows only there).
func TestRealPrometheus(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus is missing (scripts/test-deps.sh installs Debian's prometheus package)")
		}
		t.Skip("prometheus is missing: run scripts/test-deps.sh")
	}
	rules, err := filepath.Abs("../../contrib/prometheus/bondtop.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	target, web := freePort(t), freePort(t)
	bondtop := exec.Command(binary(t), "--demo", "--headless", "--listen", target, "--interval", "200ms")
	if err := bondtop.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bondtop.Process.Signal(syscall.SIGTERM); _ = bondtop.Wait() }()

	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: bondtop
    static_configs:
      - targets: [%q]
`, rules, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	p := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web, "--log.level=warn")
	p.Stdout, p.Stderr = &log, &log
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Process.Signal(syscall.SIGTERM); _ = p.Wait() }()

	api := func(path string, out any) error {
		resp, err := http.Get("http://" + web + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(out)
	}
	query := func(q string) (int, error) {
		var r struct {
			Data struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		err := api("/api/v1/query?query="+url.QueryEscape(q), &r)
		return len(r.Data.Result), err
	}
	type rule struct {
		Name      string `json:"name"`
		Health    string `json:"health"`
		LastError string `json:"lastError"`
	}
	var rulesOK []rule
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
		if up == 1 && slaves == 6 && evaluated == 7 {
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
