//go:build !nometrics

package main

import (
	"io"
	"net"
	"net/http"
	"os"
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

// TestSystemdSocket: with --web.systemd-socket, bondtop serves metrics on
// the listening socket systemd passes (fd 3, LISTEN_FDS=1, LISTEN_PID its
// own), as a .socket unit starts it; without one it says what is missing.
func TestSystemdSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// LISTEN_PID must be bondtop's own pid: a shell sets it and execs.
	cmd := exec.Command("sh", "-c", `LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" "$@"`, binary(t), "--demo", "--headless", "--web.systemd-socket")
	cmd.ExtraFiles = []*os.File{f}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Get("http://" + ln.Addr().String() + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(b), "bondtop_slave_up{") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics on the passed socket within 10 s: %v; stderr: %s", err, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, errOut, code := runBinary(t, "--demo", "--headless", "--web.systemd-socket")
	if code == 0 || !strings.Contains(errOut, "--web.systemd-socket") {
		t.Errorf("without a socket: exit %d, %q", code, errOut)
	}
	_, errOut, code = runBinary(t, "--demo", "--headless", "--listen", "127.0.0.1:1", "--web.listen-address", "127.0.0.1:2")
	if code != exitUsage || !strings.Contains(errOut, "give one address") {
		t.Errorf("two addresses: exit %d, %q", code, errOut)
	}
}
