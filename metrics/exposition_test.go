package metrics

import (
	"bytes"
	"io"
	"net/http/httptest"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/diagnose"
)

// rawScrape returns the text a GET of the exporter's handler serves.
func rawScrape(t *testing.T, e *Exporter) []byte {
	t.Helper()
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
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
	s := collector.NewSampler(collector.NewDemoSource(clock), collector.Options{Clock: clock, Analyze: diagnose.NewWindow(0).Fill})
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

// promtoolKnown are the findings of promtool's lint that the scrape has on
// purpose: metric names are an interface (the shipped rules, the Grafana
// dashboard and users' queries name them), and renaming one would break
// them.
var promtoolKnown = []string{
	`bondtop_slave_module_tx_bias_milliamperes use base unit "amperes" instead of "milliamperes"`,
}

// TestPromtoolCheckMetrics has promtool lint a whole scrape of the demo,
// the go_* and process_* metrics included: it must parse it, and find
// nothing but the known.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := needPromtool(t)
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
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 3 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if line = strings.TrimSpace(line); line != "" && !slices.Contains(promtoolKnown, line) {
			t.Errorf("promtool check metrics: %s", line)
		}
	}
}

// goProcessFamilies are the go_* and process_* families served, and their
// types: the Prometheus Go client's defaults (go_gc_duration_seconds, a
// summary, go_memstats_last_gc_time_seconds and the namespace's network
// counters aside).
var goProcessFamilies = map[string]dto.MetricType{
	"go_gc_gogc_percent":              dto.MetricType_GAUGE,
	"go_gc_gomemlimit_bytes":          dto.MetricType_GAUGE,
	"go_goroutines":                   dto.MetricType_GAUGE,
	"go_info":                         dto.MetricType_GAUGE,
	"go_memstats_alloc_bytes":         dto.MetricType_GAUGE,
	"go_memstats_alloc_bytes_total":   dto.MetricType_COUNTER,
	"go_memstats_buck_hash_sys_bytes": dto.MetricType_GAUGE,
	"go_memstats_frees_total":         dto.MetricType_COUNTER,
	"go_memstats_gc_sys_bytes":        dto.MetricType_GAUGE,
	"go_memstats_heap_alloc_bytes":    dto.MetricType_GAUGE,
	"go_memstats_heap_idle_bytes":     dto.MetricType_GAUGE,
	"go_memstats_heap_inuse_bytes":    dto.MetricType_GAUGE,
	"go_memstats_heap_objects":        dto.MetricType_GAUGE,
	"go_memstats_heap_released_bytes": dto.MetricType_GAUGE,
	"go_memstats_heap_sys_bytes":      dto.MetricType_GAUGE,
	"go_memstats_mallocs_total":       dto.MetricType_COUNTER,
	"go_memstats_mcache_inuse_bytes":  dto.MetricType_GAUGE,
	"go_memstats_mcache_sys_bytes":    dto.MetricType_GAUGE,
	"go_memstats_mspan_inuse_bytes":   dto.MetricType_GAUGE,
	"go_memstats_mspan_sys_bytes":     dto.MetricType_GAUGE,
	"go_memstats_next_gc_bytes":       dto.MetricType_GAUGE,
	"go_memstats_other_sys_bytes":     dto.MetricType_GAUGE,
	"go_memstats_stack_inuse_bytes":   dto.MetricType_GAUGE,
	"go_memstats_stack_sys_bytes":     dto.MetricType_GAUGE,
	"go_memstats_sys_bytes":           dto.MetricType_GAUGE,
	"go_sched_gomaxprocs_threads":     dto.MetricType_GAUGE,
	"go_threads":                      dto.MetricType_GAUGE,

	"process_cpu_seconds_total":        dto.MetricType_COUNTER,
	"process_max_fds":                  dto.MetricType_GAUGE,
	"process_open_fds":                 dto.MetricType_GAUGE,
	"process_resident_memory_bytes":    dto.MetricType_GAUGE,
	"process_start_time_seconds":       dto.MetricType_GAUGE,
	"process_virtual_memory_bytes":     dto.MetricType_GAUGE,
	"process_virtual_memory_max_bytes": dto.MetricType_GAUGE,
}

// Before the first snapshot, and while reads fail, a scrape has the
// go_* and process_* families (all of them, once each, of their type),
// beside bondtop's own health.
func TestGoAndProcessFamilies(t *testing.T) {
	e := New()
	for _, phase := range []string{"before any sample", "while reads fail"} {
		fams := scrape(t, e)
		for name, typ := range goProcessFamilies {
			if runtime.GOOS != "linux" && strings.HasPrefix(name, "process_") {
				if fams[name] != nil {
					t.Errorf("%s: %s off Linux", phase, name)
				}
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
			if _, ok := goProcessFamilies[name]; !ok && !strings.HasPrefix(name, "bondtop_") {
				t.Errorf("%s: %s is served, and not listed here", phase, name)
			}
		}
		if got := find(t, fams, "go_info", map[string]string{"version": runtime.Version()}); got != 1 {
			t.Errorf("go_info %v", got)
		}
		e.ReadFailed()
	}
}
