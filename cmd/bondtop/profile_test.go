package main

import (
	"io"
	"runtime"
	"testing"
)

// TestHeapNotSampledUnlessAsked: without BONDTOP_MEMPROFILE the program
// keeps no heap samples (runtime/pprof, linked for the profiles, would
// leave the runtime sampling every 512 KiB).
func TestHeapNotSampledUnlessAsked(t *testing.T) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	t.Setenv("BONDTOP_CPUPROFILE", "")
	t.Setenv("BONDTOP_MEMPROFILE", "")
	runtime.MemProfileRate = 512 * 1024
	startProfiles(io.Discard)()
	if runtime.MemProfileRate != 0 {
		t.Errorf("without BONDTOP_MEMPROFILE the heap is sampled every %d bytes, want never", runtime.MemProfileRate)
	}
}
