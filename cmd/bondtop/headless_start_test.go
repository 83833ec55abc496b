//go:build !nometrics

package main

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bondtop/bondtop/internal/testtree"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// lockedBuffer is a child's stderr, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// scrapeValues fetches addr's /metrics as series (name{a="x",b="y"},
// labels sorted) to value;
// nil while it does not answer.
func scrapeValues(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("unparsable metrics: %v", err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.Metric {
			key := name
			if len(m.Label) > 0 {
				var labels []string
				for _, lp := range m.Label {
					labels = append(labels, lp.GetName()+"="+strconv.Quote(lp.GetValue()))
				}
				slices.Sort(labels)
				key += "{" + strings.Join(labels, ",") + "}"
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.Counter.GetValue()
			}
			out[key] = v
		}
	}
	return out
}

// startHeadless runs the real binary with --headless on a free port and
// waits until a scrape satisfies ready; it returns the last scrape and
// the child's stderr. The child is stopped with SIGTERM (exit 0) at the
// end of the test.
func startHeadless(t *testing.T, ready func(map[string]float64) bool, args ...string) (map[string]float64, *lockedBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary(t), append([]string{"--headless", "--listen", addr, "--interval", "100ms", "--no-ebpf"}, args...)...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("after SIGTERM: %v; stderr: %s", err, stderr)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("still running 10 s after SIGTERM")
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("bondtop %s exited: %v; stderr: %s", strings.Join(args, " "), err, stderr)
		default:
		}
		if got := scrapeValues(t, addr); got != nil && ready(got) {
			return got, stderr
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ready scrape within 15 s; stderr: %s", stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

const noDriverSeries = `bondtop_sample_errors_total{kind="no_bonding_driver"}`

// TestHeadlessWithoutDriver: a host (here a --root tree) without the
// bonding driver is a state the exporter serves, not a reason to exit:
// bondtop_bonds 0, a counted no_bonding_driver sample for every tick, and
// the log says so once however many ticks pass.
func TestHeadlessWithoutDriver(t *testing.T) {
	empty := testtree.New(t)
	empty.Write("proc/net/dev", "Inter-|   Receive\n face |bytes\n")
	got, stderr := startHeadless(t, func(m map[string]float64) bool { return m[noDriverSeries] >= 10 }, "--root", empty.Dir)
	if v, ok := got["bondtop_bonds"]; !ok || v != 0 {
		t.Errorf("bondtop_bonds = %v (served %v), want 0", v, ok)
	}
	if got["bondtop_read_success"] != 1 {
		t.Errorf("bondtop_read_success = %v, want 1: a host without bonds is read fine", got["bondtop_read_success"])
	}
	if n := strings.Count(stderr.String(), "no bonding driver"); n != 1 {
		t.Errorf("the log says %d times that there is no driver, want once:\n%s", n, stderr)
	}
}

// TestHeadlessBondNotThere: a followed bond that is not on the host is
// served as bondtop_bond_present 0 beside the bonds that are.
func TestHeadlessBondNotThere(t *testing.T) {
	tree := hostTree(t)
	series := `bondtop_bond_present{bond="bond9"}`
	got, stderr := startHeadless(t, func(m map[string]float64) bool { _, ok := m[series]; return ok }, "--root", tree, "bond9")
	if got[series] != 0 {
		t.Errorf("%s = %v, want 0", series, got[series])
	}
	if !strings.Contains(stderr.String(), "not on this host: bond9") {
		t.Errorf("the log does not name bond9:\n%s", stderr)
	}
}

// TestHeadlessLiveHost runs the exporter on this very host: it serves
// whatever the host has, and says so, without the driver too (a build
// machine usually has none).
func TestHeadlessLiveHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the live source needs Linux")
	}
	entries, err := os.ReadDir("/proc/net/bonding")
	driver := err == nil
	got, stderr := startHeadless(t, func(m map[string]float64) bool {
		_, ok := m["bondtop_bonds"]
		return ok && (driver || m[noDriverSeries] >= 3)
	})
	if got["bondtop_bonds"] != float64(len(entries)) {
		t.Errorf("bondtop_bonds = %v, /proc/net/bonding lists %d", got["bondtop_bonds"], len(entries))
	}
	if !driver && !strings.Contains(stderr.String(), "no bonding driver on this host") {
		t.Errorf("no driver here, and the log does not say so:\n%s", stderr)
	}
	t.Logf("driver loaded: %v; log:\n%s", driver, stderr)
}

// TestHeadlessExitsOnlyOnFlags: what still ends --headless at start is a
// usage error (exit 2) or a --root tree that is not there (a busy port:
// TestListenBusyPort).
func TestHeadlessExitsOnlyOnFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--headless"}, exitUsage},
		{[]string{"--headless", "--listen", "127.0.0.1:0", "--interval", "1ms"}, exitUsage},
		{[]string{"--headless", "--listen", "127.0.0.1:0", "--root", "/nonexistent/tree"}, exitRuntime},
	} {
		_, stderr, code := runBinary(t, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d; stderr %q", c.args, code, c.code, stderr)
		}
	}
}
