package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestKeepHeapSmall: the long-running modes collect at GOGC=50, unless
// the environment sets GOGC.
func TestKeepHeapSmall(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
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
}
