package main

import (
	"os"
	"runtime/debug"
	"testing"
	"time"
)

// TestKeepHeapSmall: the long-running modes collect at GOGC=50, unless
// the environment sets GOGC, give what start-up left back to the kernel
// once it settled (the heap's free pages, the program's pages), and
// again and again after that.
func TestKeepHeapSmall(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	given := make(chan struct{}, 100)
	defer func(settled time.Duration, give func(), every time.Duration) {
		startupSettled, giveBack, giveBackEvery = settled, give, every
	}(startupSettled, giveBack, giveBackEvery)
	startupSettled, giveBackEvery = time.Millisecond, time.Millisecond
	giveBack = func() {
		select {
		case given <- struct{}{}:
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
	// Once when start-up settled and then every giveBackEvery, for each
	// of the two calls: 2 + 2×3 at least.
	for i := range 8 {
		select {
		case <-given:
		case <-time.After(10 * time.Second):
			t.Fatalf("memory given back %d times, want it once start-up settled and then again and again", i)
		}
	}
}
