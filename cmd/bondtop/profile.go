package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// memProfileEvery is how often BONDTOP_MEMPROFILE is rewritten: a profile
// taken at exit would show a heap the dashboard has already let go of.
const memProfileEvery = 10 * time.Second

// startProfiles starts what the hidden BONDTOP_CPUPROFILE and
// BONDTOP_MEMPROFILE ask for: a CPU profile of the whole run, and a heap
// profile of the running program (after a collection, rewritten every
// memProfileEvery). They are for measuring the real binary where it runs
// (the dashboard under tmux, see scripts/measure.sh), which a
// benchmark cannot reproduce: the terminal, tview's event loop, the Go
// scheduler. The returned function ends the CPU profile.
//
// Without BONDTOP_MEMPROFILE the heap is not sampled at all. Linking
// runtime/pprof keeps the runtime's sampler on by default (one sample per
// 512 KiB allocated), and the samples' call stacks and the table that
// finds them are resident memory in a dashboard that has nothing to hand
// them to: 0.7 MB of anonymous memory after an hour at 100 ms
// (docs/performance.md).
func startProfiles(stderr io.Writer) func() {
	if path := os.Getenv("BONDTOP_MEMPROFILE"); path == "" {
		runtime.MemProfileRate = 0
	} else {
		runtime.MemProfileRate = 1024 // the heap is a few MB: the default 512 KiB sees nothing
		go func() {
			for range time.Tick(memProfileEvery) {
				if err := writeHeapProfile(path); err != nil {
					fmt.Fprintf(stderr, "bondtop: BONDTOP_MEMPROFILE: %v\n", err)
					return
				}
			}
		}()
	}
	path := os.Getenv("BONDTOP_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: BONDTOP_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 1); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
