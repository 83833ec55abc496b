package metrics

import (
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"

	"github.com/bondtop/bondtop/internal/promtext"
)

// This file owns the go_* metrics every Go exporter serves, with the
// names, types and meaning the Prometheus Go client gave them (its Go
// collector's default set, but for go_gc_duration_seconds, a summary, and
// go_memstats_last_gc_time_seconds, which runtime/metrics does not
// give): dashboards and alerts made for Go programs read them. Values
// come from runtime/metrics, which reads the runtime's statistics without
// stopping the world, as runtime.ReadMemStats would.

var (
	descGoInfo = promtext.NewDesc("go_info",
		"The Go version bondtop was built with; always 1.", promtext.Gauge, "version")
	descGoThreads = promtext.NewDesc("go_threads",
		"OS threads the Go runtime has created.", promtext.Gauge)
	descGoroutines = promtext.NewDesc("go_goroutines",
		"Goroutines that exist now.", promtext.Gauge)
)

// goMetric is a go_* metric that is the sum of runtime/metrics values,
// as the Go client computed its go_memstats_* from them (the MemStats
// field each stands for is in its help).
type goMetric struct {
	desc *promtext.Desc
	from []string
}

// The runtime/metrics names read more than once.
const (
	rmHeapObjects  = "/memory/classes/heap/objects:bytes"
	rmHeapUnused   = "/memory/classes/heap/unused:bytes"
	rmHeapReleased = "/memory/classes/heap/released:bytes"
	rmHeapFree     = "/memory/classes/heap/free:bytes"
	rmHeapStacks   = "/memory/classes/heap/stacks:bytes"
	rmTinyAllocs   = "/gc/heap/tiny/allocs:objects"
	rmMSpanInuse   = "/memory/classes/metadata/mspan/inuse:bytes"
	rmMCacheInuse  = "/memory/classes/metadata/mcache/inuse:bytes"
)

func goGauge(name, help string, from ...string) goMetric {
	return goMetric{promtext.NewDesc(name, help, promtext.Gauge), from}
}

func goCounter(name, help string, from ...string) goMetric {
	return goMetric{promtext.NewDesc(name, help, promtext.Counter), from}
}

var goMetrics = []goMetric{
	goGauge("go_sched_gomaxprocs_threads", "GOMAXPROCS: the OS threads that can run Go code at once.", "/sched/gomaxprocs:threads"),
	goGauge("go_gc_gogc_percent", "GOGC: the heap growth, in percent of the live heap, that starts a garbage collection (100 unless set).", "/gc/gogc:percent"),
	goGauge("go_gc_gomemlimit_bytes", "GOMEMLIMIT: the Go runtime's soft memory limit (math.MaxInt64 unless set).", "/gc/gomemlimit:bytes"),

	goGauge("go_memstats_alloc_bytes", "Bytes of heap objects allocated and not yet freed (MemStats.Alloc).", rmHeapObjects),
	goCounter("go_memstats_alloc_bytes_total", "Bytes of heap objects allocated since start, freed or not (MemStats.TotalAlloc).", "/gc/heap/allocs:bytes"),
	goGauge("go_memstats_sys_bytes", "Bytes of memory the Go runtime has obtained from the OS (MemStats.Sys).", "/memory/classes/total:bytes"),
	goGauge("go_memstats_heap_alloc_bytes", "Bytes of heap objects allocated and not yet freed, as go_memstats_alloc_bytes (MemStats.HeapAlloc).", rmHeapObjects),
	goGauge("go_memstats_heap_inuse_bytes", "Bytes in heap spans that hold objects (MemStats.HeapInuse).", rmHeapObjects, rmHeapUnused),
	goGauge("go_memstats_heap_idle_bytes", "Bytes in heap spans that hold no objects, returned to the OS or not (MemStats.HeapIdle).", rmHeapReleased, rmHeapFree),
	goGauge("go_memstats_heap_released_bytes", "Bytes of heap returned to the OS (MemStats.HeapReleased).", rmHeapReleased),
	goGauge("go_memstats_heap_sys_bytes", "Bytes of heap obtained from the OS (MemStats.HeapSys).", rmHeapObjects, rmHeapUnused, rmHeapReleased, rmHeapFree),
	goGauge("go_memstats_heap_objects", "Heap objects allocated and not yet freed (MemStats.HeapObjects).", "/gc/heap/objects:objects"),
	goCounter("go_memstats_mallocs_total", "Heap objects allocated since start (MemStats.Mallocs).", "/gc/heap/allocs:objects", rmTinyAllocs),
	goCounter("go_memstats_frees_total", "Heap objects freed since start (MemStats.Frees).", "/gc/heap/frees:objects", rmTinyAllocs),
	goGauge("go_memstats_next_gc_bytes", "The heap size the next garbage collection aims at (MemStats.NextGC).", "/gc/heap/goal:bytes"),
	goGauge("go_memstats_stack_inuse_bytes", "Bytes of goroutine stacks in heap spans (MemStats.StackInuse).", rmHeapStacks),
	goGauge("go_memstats_stack_sys_bytes", "Bytes of stack memory obtained from the OS, goroutines' and threads' (MemStats.StackSys).", rmHeapStacks, "/memory/classes/os-stacks:bytes"),
	goGauge("go_memstats_mspan_inuse_bytes", "Bytes of mspan structures in use (MemStats.MSpanInuse).", rmMSpanInuse),
	goGauge("go_memstats_mspan_sys_bytes", "Bytes of memory obtained from the OS for mspan structures (MemStats.MSpanSys).", rmMSpanInuse, "/memory/classes/metadata/mspan/free:bytes"),
	goGauge("go_memstats_mcache_inuse_bytes", "Bytes of mcache structures in use (MemStats.MCacheInuse).", rmMCacheInuse),
	goGauge("go_memstats_mcache_sys_bytes", "Bytes of memory obtained from the OS for mcache structures (MemStats.MCacheSys).", rmMCacheInuse, "/memory/classes/metadata/mcache/free:bytes"),
	goGauge("go_memstats_buck_hash_sys_bytes", "Bytes of the profiling bucket hash table (MemStats.BuckHashSys).", "/memory/classes/profiling/buckets:bytes"),
	goGauge("go_memstats_gc_sys_bytes", "Bytes of garbage collection metadata (MemStats.GCSys).", "/memory/classes/metadata/other:bytes"),
	goGauge("go_memstats_other_sys_bytes", "Bytes of other runtime allocations (MemStats.OtherSys).", "/memory/classes/other:bytes"),
}

// goSampleNames are the runtime/metrics names goMetrics read, each once.
var goSampleNames = func() []string {
	var names []string
	for _, m := range goMetrics {
		for _, n := range m.from {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}()

// collectRuntime adds the go_* metrics. A runtime/metrics value this Go
// does not have (a future one may drop some) leaves out the metrics made
// of it, not the scrape.
func collectRuntime(out *promtext.Scrape) {
	out.Add(descGoInfo, 1, runtime.Version())
	// Not /sched/goroutines:goroutines, which counts the runtime's own
	// (the garbage collector's workers...) too: the Go client counted the
	// program's, as runtime.NumGoroutine does.
	out.Add(descGoroutines, float64(runtime.NumGoroutine()))
	// Not /sched/threads/total:threads (the threads alive now): the Go
	// client counted the threads created, which is this.
	threads, _ := runtime.ThreadCreateProfile(nil)
	out.Add(descGoThreads, float64(threads))

	samples := make([]rtmetrics.Sample, len(goSampleNames))
	for i, n := range goSampleNames {
		samples[i].Name = n
	}
	rtmetrics.Read(samples)
next:
	for _, m := range goMetrics {
		sum := 0.0
		for _, n := range m.from {
			v, ok := sampleValue(samples[slices.Index(goSampleNames, n)].Value)
			if !ok {
				continue next
			}
			sum += v
		}
		out.Add(m.desc, sum)
	}
}

// sampleValue returns a scalar runtime/metrics value as a float, and
// false for any other kind (KindBad: this Go has no such metric).
func sampleValue(v rtmetrics.Value) (float64, bool) {
	switch v.Kind() {
	case rtmetrics.KindUint64:
		return float64(v.Uint64()), true
	case rtmetrics.KindFloat64:
		return v.Float64(), true
	}
	return 0, false
}
