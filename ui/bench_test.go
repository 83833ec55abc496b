package ui

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time: on a shared machine it
// says what a redraw costs where wall time would also count waiting.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchSim(b *testing.B) *sim {
	t := &testing.T{}
	h := lacpHost(t, "synthetic-8023ad-6.8-4slaves-root.txt", []string{"e1", "e2", "e3", "e4"})
	if t.Failed() {
		b.Fatal("fixture host failed")
	}
	return newSim(t, h, 160, 48, false)
}

// BenchmarkRedraw160x48 is one full redraw of a busy 802.3ad bond (4
// slaves, 90 s of history) at 160x48 on a SimulationScreen: clear, draw
// every panel, Show. What every snapshot costs; the goal is under 2 ms.
func BenchmarkRedraw160x48(b *testing.B) {
	s := benchSim(b)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		s.draw()
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkDrawPanels160x48 is the dashboard's own share: clear and draw
// the panels, without the simulated terminal's Show (which a real
// terminal replaces by writing only the changed cells).
func BenchmarkDrawPanels160x48(b *testing.B) {
	s := benchSim(b)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		s.d.screen.Clear()
		s.d.root.Draw(s.d.screen)
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
