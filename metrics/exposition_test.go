package metrics

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/internal/testbin"
)

// rawScrape returns the text a GET of the exporter's handler serves.
func rawScrape(t *testing.T, e *Exporter) []byte {
	t.Helper()
	return rawScrapeAccept(t, e, "")
}

// rawScrapeAccept is rawScrape with an Accept header: "" for the text
// format, OpenMetrics' media type for OpenMetrics.
func rawScrapeAccept(t *testing.T, e *Exporter, accept string) []byte {
	t.Helper()
	srv := httptest.NewServer(e.Handler(nil))
	defer srv.Close()
	req, err := http.NewRequest("GET", srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := "text/plain; version=0.0.4; charset=utf-8"
	if accept != "" {
		want = "application/openmetrics-text; version=1.0.0; charset=utf-8"
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, want) {
		t.Errorf("Content-Type %q, want %q", ct, want)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// demoExporter is an exporter fed the demo host for 35 s, past its first
// incident, with bondtop's diagnosis: every kind of series it has.
func demoExporter(t *testing.T) *Exporter {
	t.Helper()
	now := time.Unix(1_700_000_100, 0)
	clock := func() time.Time { return now }
	s := collector.NewSampler(demo.New(clock), collector.Options{Clock: clock, Analyze: diagnose.NewWindow(0).Fill})
	e := New(Version("test"))
	for range 35 {
		snap, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		e.Update(snap)
		now = now.Add(time.Second)
	}
	return e
}

// TestPromtoolCheckMetrics has promtool lint a whole scrape of the demo,
// the go_* and process_* metrics included: it must parse it, and find
// nothing (the unit fixes: _amperes, _watts).
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := testbin.NeedTool(t, "promtool")
	text := rawScrape(t, demoExporter(t))
	for _, want := range []string{"\n# TYPE bondtop_slave_up gauge\n", "\n# TYPE go_memstats_sys_bytes gauge\n", "\n# TYPE bondtop_finding gauge\n"} {
		if !bytes.Contains(text, []byte(want)) {
			t.Fatalf("the scrape lacks %q: not the whole of it", want)
		}
	}
	if runtime.GOOS == "linux" && !bytes.Contains(text, []byte("\n# TYPE process_resident_memory_bytes gauge\n")) {
		t.Fatal("no process_* metrics in the scrape")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	// promtool exits 3 for lint findings, 1 for text it cannot parse.
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// goProcessFamilies are go_* and process_* families a scrape must have,
// and their types: the Prometheus Go client's collectors serve them (and
// a few more, which the client's version decides).
var goProcessFamilies = map[string]dto.MetricType{
	"go_gc_duration_seconds":           dto.MetricType_SUMMARY,
	"go_goroutines":                    dto.MetricType_GAUGE,
	"go_info":                          dto.MetricType_GAUGE,
	"go_memstats_alloc_bytes":          dto.MetricType_GAUGE,
	"go_memstats_alloc_bytes_total":    dto.MetricType_COUNTER,
	"go_memstats_heap_inuse_bytes":     dto.MetricType_GAUGE,
	"go_memstats_sys_bytes":            dto.MetricType_GAUGE,
	"go_threads":                       dto.MetricType_GAUGE,
	"process_cpu_seconds_total":        dto.MetricType_COUNTER,
	"process_max_fds":                  dto.MetricType_GAUGE,
	"process_open_fds":                 dto.MetricType_GAUGE,
	"process_resident_memory_bytes":    dto.MetricType_GAUGE,
	"process_start_time_seconds":       dto.MetricType_GAUGE,
	"process_virtual_memory_bytes":     dto.MetricType_GAUGE,
	"process_virtual_memory_max_bytes": dto.MetricType_GAUGE,
}

// Before the first snapshot, and while reads fail, a scrape has the
// go_* and process_* families of the Go client, beside bondtop's own
// health, and nothing else.
func TestGoAndProcessFamilies(t *testing.T) {
	e := New()
	for _, phase := range []string{"before any sample", "while reads fail"} {
		fams := scrape(t, e)
		for name, typ := range goProcessFamilies {
			if runtime.GOOS != "linux" && strings.HasPrefix(name, "process_") {
				continue
			}
			f := fams[name]
			if f == nil {
				t.Errorf("%s: no %s", phase, name)
				continue
			}
			if f.GetType() != typ || len(f.Metric) != 1 || f.GetHelp() == "" {
				t.Errorf("%s: %s is %v with %d series, help %q; want one %v", phase, name, f.GetType(), len(f.Metric), f.GetHelp(), typ)
			}
		}
		for name := range fams {
			if !strings.HasPrefix(name, "bondtop_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
				t.Errorf("%s: %s is served", phase, name)
			}
		}
		if got := find(t, fams, "go_info", map[string]string{"version": runtime.Version()}); got != 1 {
			t.Errorf("go_info %v", got)
		}
		e.ReadFailed()
	}
}
