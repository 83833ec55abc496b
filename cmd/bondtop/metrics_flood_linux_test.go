//go:build !nometrics

package main

// The /metrics server under a flood of connections, in a child process
// whose file descriptor limit is lowered (startLimited): it must outlive
// running out of descriptors and answer a scrape once the flood is over.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bondtop/bondtop/metrics/webguard"
)

// `--root DIR --listen --headless` with 128 descriptors and 300 idle
// connections to /metrics: the exporter holds a bounded number, so its
// reads of the tree never fail, and it answers a scrape once the flood
// is over. Then a tree that cannot be read is an error metric, not an
// exit, and a readable one brings the bond metrics back.
func TestMetricsSurvivesFloodUnderFDLimit(t *testing.T) {
	dir := hostTree(t)
	port := freeLoopbackPort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	c := startLimited(t, 128, "serving metrics", "--root", dir, "--listen", addr, "--headless", "--interval", "100ms")
	conns := flood(t, port, 300)
	// Half of them ask once and then idle on a kept-alive connection.
	for i, fc := range conns {
		if i%2 == 0 {
			fmt.Fprintf(fc, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		}
	}
	time.Sleep(1500 * time.Millisecond)
	c.alive(t, "during the flood")
	// The connections it holds are bounded, far below the limit.
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", c.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if len(fds) > webguard.DefaultMaxConns+24 {
		t.Errorf("%d descriptors open during a flood of %d connections; want at most %d connections held", len(fds), len(conns), webguard.DefaultMaxConns)
	}
	t.Logf("%d connections, %d descriptors open in bondtop", len(conns), len(fds))
	for _, fc := range conns {
		fc.Close()
	}
	fams := scrapeWithin(t, addr, 10*time.Second)
	if got := metricValue(fams, "bondtop_read_errors_total"); got != 0 {
		t.Errorf("%v failed reads of the tree during the flood: the connections were not bounded", got)
	}
	if fams["bondtop_slave_up"] == nil {
		t.Error("no slave metrics after the flood")
	}

	// The tree becomes unreadable: its proc and sys turn into files.
	for _, sub := range []string{"proc", "sys"} {
		p := filepath.Join(dir, sub)
		if err := os.Rename(p, p+".away"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not a directory"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	c.alive(t, "with an unreadable tree")
	fams = scrapeWithin(t, addr, 5*time.Second)
	if metricValue(fams, "bondtop_read_success") != 0 || metricValue(fams, "bondtop_read_errors_total") < 1 {
		t.Errorf("unreadable tree: read_success %v, read_errors_total %v; want 0 and at least 1",
			metricValue(fams, "bondtop_read_success"), metricValue(fams, "bondtop_read_errors_total"))
	}
	for _, sub := range []string{"proc", "sys"} {
		p := filepath.Join(dir, sub)
		os.Remove(p)
		if err := os.Rename(p+".away", p); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	fams = scrapeWithin(t, addr, 5*time.Second)
	if metricValue(fams, "bondtop_read_success") != 1 || fams["bondtop_slave_up"] == nil {
		t.Error("a readable tree again did not bring the metrics back")
	}
	if n := strings.Count(c.output(), "not a directory"); n != 1 {
		t.Errorf("the failing read was reported %d times in 500 ms; want once", n)
	}
	c.stop(t)
}

// scrapeWithin scrapes addr until it answers, for up to d.
func scrapeWithin(t *testing.T, addr string, d time.Duration) map[string]*dto.MetricFamily {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			last = err
			continue
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("unparsable metrics: %v", err)
		}
		return fams
	}
	t.Fatalf("no scrape of %s within %v: %v", addr, d, last)
	return nil
}

// metricValue is the value of a family's first metric, -1 when absent.
func metricValue(fams map[string]*dto.MetricFamily, name string) float64 {
	f := fams[name]
	if f == nil || len(f.Metric) == 0 {
		return -1
	}
	m := f.Metric[0]
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
