package metrics

import (
	"bytes"
	"math"
	"reflect"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bondtop/bondtop/internal/promtext"
)

// collectFamilies runs collect on an empty Scrape and parses its text.
func collectFamilies(t *testing.T, collect func(*promtext.Scrape)) map[string]*dto.MetricFamily {
	t.Helper()
	var s promtext.Scrape
	collect(&s)
	var b bytes.Buffer
	if _, err := s.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value is the value of the family's only sample; the test fails when it
// is not there.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil || len(f.Metric) != 1 {
		t.Fatalf("%s: %v, want one sample", name, f)
	}
	if m := f.Metric[0]; m.Counter != nil {
		return m.Counter.GetValue()
	}
	return f.Metric[0].GetGauge().GetValue()
}

// The go_* settings are the runtime's, as set now.
func TestRuntimeSettings(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(137))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(3 << 30))
	fams := collectFamilies(t, collectRuntime)
	for name, want := range map[string]float64{
		"go_gc_gogc_percent":          137,
		"go_gc_gomemlimit_bytes":      3 << 30,
		"go_sched_gomaxprocs_threads": float64(runtime.GOMAXPROCS(0)),
		"go_threads":                  float64(pprof.Lookup("threadcreate").Count()),
	} {
		if got := value(t, fams, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got := value(t, collectFamilies(t, collectRuntime), "go_gc_gomemlimit_bytes"); got != math.MaxInt64 {
		t.Errorf("no memory limit: %v, want math.MaxInt64", got)
	}
	if got := value(t, fams, "go_goroutines"); got < 1 || math.Abs(got-float64(runtime.NumGoroutine())) > 2 {
		t.Errorf("go_goroutines %v, runtime.NumGoroutine %d", got, runtime.NumGoroutine())
	}
}

// Each go_memstats_* metric is the runtime.MemStats field its help names,
// as runtime.ReadMemStats gives it right before and right after.
func TestMemStatsMatchReadMemStats(t *testing.T) {
	field := regexp.MustCompile(`\(MemStats\.(\w+)\)`)
	// A collection, and every free page returned to the OS at once: the
	// background scavenger, which after a bare runtime.GC returns pages
	// while the test reads, moving HeapReleased and HeapIdle by
	// megabytes between the two reads, then has nothing left to return.
	debug.FreeOSMemory()
	// MemStats read right before and right after: what the test
	// allocates while it reads moves a figure between the two, and the
	// metric must lie between them (with a little slack).
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fams := collectFamilies(t, collectRuntime)
	runtime.ReadMemStats(&after)
	checked := 0
	for name, fam := range fams {
		if !strings.HasPrefix(name, "go_memstats_") {
			continue
		}
		help := fam.GetHelp()
		sub := field.FindStringSubmatch(help)
		if sub == nil {
			t.Errorf("%s: the help names no MemStats field: %q", name, help)
			continue
		}
		f := reflect.ValueOf(before).FieldByName(sub[1])
		if !f.IsValid() {
			t.Errorf("%s: no field MemStats.%s", name, sub[1])
			continue
		}
		// What the test allocates between the two reads: a few kB, a few
		// hundred objects.
		slack := 64 << 10
		if !strings.HasSuffix(name, "_bytes") {
			slack = 500
		}
		first, last := float64(f.Uint()), float64(reflect.ValueOf(after).FieldByName(sub[1]).Uint())
		lo, hi := min(first, last), max(first, last)
		margin := 0.02*hi + float64(slack)
		if got := value(t, fams, name); got < lo-margin || got > hi+margin {
			t.Errorf("%s = %v, MemStats.%s = %v before and %v after", name, got, sub[1], first, last)
		}
		checked++
	}
	if checked != 21 {
		t.Errorf("%d go_memstats_* metrics checked, want 21", checked)
	}
}
