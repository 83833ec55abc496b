package ui

import (
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
)

// The header says when sampling cannot keep the interval, with the pace
// it keeps, and stops saying it once the pace is kept again.
func TestHeaderShowsSamplingBehind(t *testing.T) {
	h := lacpHost(t, "synthetic-8023ad-6.8-4slaves-root.txt", []string{"e1", "e2", "e3", "e4"})
	s := newSim(t, h, 120, 30, false)
	mustNotContain(t, s.text(), "BEHIND")
	late := *h.snaps[len(h.snaps)-1]
	late.Behind = 1340 * time.Millisecond
	s.d.apply([]*collector.Snapshot{&late})
	s.draw()
	mustContain(t, s.text(), "BEHIND: every 1.34s")
	kept := late
	kept.Behind = 0
	s.d.apply([]*collector.Snapshot{&kept})
	s.draw()
	mustNotContain(t, s.text(), "BEHIND")
}
