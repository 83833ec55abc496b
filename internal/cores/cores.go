// Package cores narrows how many threads run Go code (GOMAXPROCS) while
// the dashboard only samples and draws, and widens it for load tests and
// drills.
package cores

import (
	"os"
	"runtime"
	"sync"
)

// Cores fits how many threads run Go code at once (GOMAXPROCS) to what the
// dashboard is doing. Sampling and drawing are one goroutine after
// another; with a single P the runtime hands a snapshot from the sampler
// to the event loop on the thread that made it, instead of waking a
// thread on the other core for each hand-off only to find nothing to do.
// A load test or a drill moves gigabits from this process: while one
// runs, every core is back.
//
// A GOMAXPROCS set in the environment is the admin's choice and is left
// alone.
type Cores struct {
	mu      sync.Mutex
	users   int
	managed bool
}

// Narrow starts at one P, unless GOMAXPROCS is set in the
// environment; Undo gives the runtime's default back.
func Narrow() *Cores {
	c := &Cores{managed: os.Getenv("GOMAXPROCS") == ""}
	if c.managed {
		runtime.GOMAXPROCS(1)
	}
	return c
}

// Acquire gives the process every core until the returned release is
// called (once; later calls do nothing).
func (c *Cores) Acquire() (release func()) {
	if c == nil {
		return func() {} // a dashboard that never ran (tests)
	}
	c.mu.Lock()
	c.users++
	if c.users == 1 && c.managed {
		runtime.SetDefaultGOMAXPROCS()
	}
	c.mu.Unlock()
	return sync.OnceFunc(func() {
		c.mu.Lock()
		c.users--
		if c.users == 0 && c.managed {
			runtime.GOMAXPROCS(1)
		}
		c.mu.Unlock()
	})
}

// Undo gives the runtime its default back, when the dashboard closes.
func (c *Cores) Undo() {
	c.mu.Lock()
	if c.managed {
		runtime.SetDefaultGOMAXPROCS()
		c.managed = false
	}
	c.mu.Unlock()
}
