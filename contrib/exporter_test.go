// Package contrib holds no code: its tests check what contrib/ ships (the
// Prometheus rules, the Grafana dashboard, the systemd unit) against the
// real bondtop binary and the real tools that read them (promtool,
// systemd-analyze). See docs/prometheus.md and docs/packaging.md.
package contrib

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// buildBondtop compiles the real binary once per test run; BONDTOP_BIN
// names one already built instead.
var buildBondtop = sync.OnceValues(func() (string, error) {
	if bin := os.Getenv("BONDTOP_BIN"); bin != "" {
		return bin, nil
	}
	dir, err := os.MkdirTemp("", "bondtop-contrib")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bondtop")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/bondtop").CombinedOutput()
	if err != nil {
		return "", &exec.ExitError{Stderr: out}
	}
	return bin, nil
})

func bondtopBinary(t *testing.T) string {
	t.Helper()
	bin, err := buildBondtop()
	if err != nil {
		t.Fatalf("go build: %v", err)
	}
	return bin
}

// needTool returns the path of a tool the tests judge with; under CI=true
// its absence fails (scripts/test-deps.sh installs it).
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				return filepath.Join(dir, name)
			}
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing (scripts/test-deps.sh installs it)", name)
		}
		t.Skipf("%s is missing: run scripts/test-deps.sh", name)
	}
	return p
}

// exporter is a running `bondtop --headless`.
type exporter struct {
	addr string
}

// startExporter runs the real binary with --headless --listen on a free
// port and the given arguments, until the test ends (SIGTERM).
func startExporter(t *testing.T, args ...string) *exporter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bondtopBinary(t), append([]string{"--headless", "--listen", addr, "--no-ebpf"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-done:
			t.Fatalf("bondtop %s exited: %s", strings.Join(args, " "), stderr.String())
		default:
		}
		if s, _ := scrapeOnce(addr); s != nil {
			return &exporter{addr: addr}
		}
		if time.Now().After(deadline) {
			t.Fatalf("bondtop %s: no /metrics within 20 s", strings.Join(args, " "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scrapeOnce fetches addr's /metrics as series to value; the series key
// is name{a="x",b="y"} with the labels sorted (name alone without any).
func scrapeOnce(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.Metric {
			labels := make([]string, 0, len(m.Label))
			for _, lp := range m.Label {
				labels = append(labels, lp.GetName()+"="+strconv.Quote(lp.GetValue()))
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.Counter.GetValue()
			}
			out[seriesKey(name, labels)] = v
		}
	}
	return out, nil
}

// seriesKey is name{labels} with the labels (a="x") sorted.
func seriesKey(name string, labels []string) string {
	if len(labels) == 0 {
		return name
	}
	labels = slices.Clone(labels)
	slices.Sort(labels)
	return name + "{" + strings.Join(labels, ",") + "}"
}
