package main

import (
	"os"
	"runtime/debug"
	"testing"
	"time"
)

// TestKeepHeapSmall: the long-running modes collect at GOGC=50, unless
// the environment sets GOGC, and give the heap start-up left back to the
// kernel once it settled.
func TestKeepHeapSmall(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	given := make(chan struct{}, 2)
	defer func(settled time.Duration, give func()) { startupSettled, giveBack = settled, give }(startupSettled, giveBack)
	startupSettled, giveBack = time.Millisecond, func() { given <- struct{}{} }
	t.Setenv("GOGC", "80")
	debug.SetGCPercent(80) // as the runtime would have read it at start
	keepHeapSmall()
	if got := debug.SetGCPercent(100); got != 80 {
		t.Errorf("GOGC=80 in the environment: the collector runs at %d", got)
	}
	os.Unsetenv("GOGC") // t.Setenv puts it back at the end
	keepHeapSmall()
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
}
