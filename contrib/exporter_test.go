// Package contrib holds no code: its tests check what contrib/ ships (the
// Prometheus rules, the Grafana dashboard, the systemd unit) against the
// real bondtop binary and the real tools that read them (promtool,
// systemd-analyze). See docs/prometheus.md and docs/packaging.md.
package contrib

import (
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bondtop/bondtop/internal/testbin"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

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
	cmd := exec.Command(testbin.Build(t, "../cmd/bondtop"), append([]string{"--headless", "--listen", addr, "--no-ebpf"}, args...)...)
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
