package main

import (
	"os"
	"runtime/debug"
	"testing"
	"time"
)

// TestKeepHeapSmall: the long-running modes collect at GOGC=50, unless
// the environment sets GOGC, give what start-up left back to the kernel
// once it settled, and the heap's free pages again and again after that.
func TestKeepHeapSmall(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	given := make(chan struct{}, 2)
	freed := make(chan struct{}, 100)
	defer func(settled time.Duration, give func(), every time.Duration, free func()) {
		startupSettled, giveBack, freeHeapEvery, freeHeap = settled, give, every, free
	}(startupSettled, giveBack, freeHeapEvery, freeHeap)
	startupSettled, giveBack = time.Millisecond, func() { given <- struct{}{} }
	freeHeapEvery = time.Millisecond
	freeHeap = func() {
		select {
		case freed <- struct{}{}:
		default:
		}
	}
	t.Setenv("GOGC", "80")
	debug.SetGCPercent(80) // as the runtime would have read it at start
	defer keepHeapSmall()()
	if got := debug.SetGCPercent(100); got != 80 {
		t.Errorf("GOGC=80 in the environment: the collector runs at %d", got)
	}
	os.Unsetenv("GOGC") // t.Setenv puts it back at the end
	defer keepHeapSmall()()
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("no GOGC in the environment: the collector runs at %d, want 50", got)
	}
	for range 2 {
		select {
		case <-given:
		case <-time.After(10 * time.Second):
			t.Fatal("the heap left by start-up was not given back")
		}
	}
	for range 6 { // 3 from each of the two calls, at least
		select {
		case <-freed:
		case <-time.After(10 * time.Second):
			t.Fatal("the heap's free pages were not given back again after start-up")
		}
	}
}
