package collectortest

import (
	"runtime"
	"slices"
	"testing"
)

// HeapAlloc is the bytes of live objects after two collections (the
// second frees what the first only finalised).
func HeapAlloc() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// CheckNoGrowth runs tick 1,000 times, then 3,000 more, and fails when
// the live heap grew between the two by more than 64 kB: a leak of 24
// bytes a tick shows.
func CheckNoGrowth(t testing.TB, name string, tick func()) {
	t.Helper()
	for range 1000 {
		tick()
	}
	before := HeapAlloc()
	for range 3000 {
		tick()
	}
	after := HeapAlloc()
	runtime.KeepAlive(tick) // what it ticks counts in both
	t.Logf("%s: heap %d -> %d bytes over 3,000 ticks", name, before, after)
	if grown := int64(after) - int64(before); grown > 64<<10 {
		t.Errorf("%s: the heap grew by %d bytes over 3,000 steady ticks, want none", name, grown)
	}
}

// SteadyAllocs is the median of what 40 ticks allocate, each counted on
// its own: a steady tick's, without the configuration's re-read (one
// tick in 50) that allocs/op spreads over all of them.
func SteadyAllocs(tick func()) float64 {
	counts := make([]float64, 40)
	var before, after runtime.MemStats
	for i := range counts {
		runtime.ReadMemStats(&before)
		tick()
		runtime.ReadMemStats(&after)
		counts[i] = float64(after.Mallocs - before.Mallocs)
	}
	slices.Sort(counts)
	return counts[len(counts)/2]
}

// ReportBudget reports a steady tick's allocations beside their budget
// (after the loop: b.Loop's first call drops metrics reported before).
func ReportBudget(b *testing.B, steady, budget float64) {
	b.ReportMetric(steady, "steady-allocs/tick")
	b.ReportMetric(budget, "budget-allocs/tick")
}
