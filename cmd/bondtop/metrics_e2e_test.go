//go:build !nometrics

package main

import (
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestHeadlessMetrics runs `bondtop --demo --listen ADDR --headless`, scrapes
// it as Prometheus would, and stops it with SIGTERM: exit 0.
func TestHeadlessMetrics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary(t), "--demo", "--listen", addr, "--headless", "--interval", "100ms")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			parser := expfmt.NewTextParser(model.UTF8Validation)
			fams, perr := parser.TextToMetricFamilies(resp.Body)
			resp.Body.Close()
			if perr != nil {
				t.Fatalf("unparsable metrics: %v", perr)
			}
			if f := fams["bondtop_slave_transmit_bytes_total"]; f != nil && len(f.Metric) == 8 { // the demo's 4 + 2 Linux slaves, 2 OVS members
				body = f.String()
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if body == "" {
		t.Fatalf("no slave metrics within 10 s; stderr: %s", stderr.String())
	}
	// The real server's other paths: landing page, health, read-only.
	for _, c := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/", 200, `href="/metrics"`},
		{"GET", "/-/healthy", 200, "OK"},
		{"POST", "/metrics", http.StatusMethodNotAllowed, ""},
	} {
		req, _ := http.NewRequest(c.method, "http://"+addr+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.body) {
			t.Errorf("%s %s: %d %q", c.method, c.path, resp.StatusCode, b)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v; stderr: %s", err, stderr.String())
	}
}

func TestListenBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, stderr, code := runBinary(t, "--demo", "--listen", ln.Addr().String(), "--headless")
	if code != 1 || !strings.Contains(stderr, "--listen") || !strings.Contains(stderr, "address already in use") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
