package cores

import (
	"runtime"
	"testing"
)

// TestCoresFollowTheWork: one P while the dashboard only samples and
// draws, the default while a load test or a drill runs, and the default
// again when the dashboard closes.
func TestCoresFollowTheWork(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	c := Narrow()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("dashboard alone: GOMAXPROCS %d, want 1", n)
	}
	load := c.Acquire()
	drill := c.Acquire()
	if n := runtime.GOMAXPROCS(0); n != def {
		t.Fatalf("load test running: GOMAXPROCS %d, want %d", n, def)
	}
	load()
	load() // a second release is a no-op
	if n := runtime.GOMAXPROCS(0); n != def {
		t.Fatalf("drill still running: GOMAXPROCS %d, want %d", n, def)
	}
	drill()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("all done: GOMAXPROCS %d, want 1", n)
	}
	c.Undo()
	if n := runtime.GOMAXPROCS(0); n != def {
		t.Fatalf("closed: GOMAXPROCS %d, want %d", n, def)
	}
}

// TestCoresLeaveTheAdminsChoice: GOMAXPROCS in the environment is kept.
func TestCoresLeaveTheAdminsChoice(t *testing.T) {
	t.Setenv("GOMAXPROCS", "2")
	before := runtime.GOMAXPROCS(0)
	c := Narrow()
	release := c.Acquire()
	release()
	c.Undo()
	if n := runtime.GOMAXPROCS(0); n != before {
		t.Fatalf("GOMAXPROCS %d, want the %d it was", n, before)
	}
}
