package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/term/termtest"
	"github.com/gdamore/tcell/v2"
	"github.com/gdamore/tcell/v2/terminfo"
)

// memSource is a Source in memory: bond0 as the 4-slave procfs fixture
// says, its counters moving at a lively pace. Sampling it costs next to
// nothing, so a benchmark over it measures the dashboard.
type memSource struct {
	bond  bonding.Bond
	step  int
	bytes map[string][2]uint64
}

func newMemSource(b testing.TB) *memSource {
	data, err := os.ReadFile(filepath.Join("..", "bonding", "testdata", "proc", "synthetic-8023ad-6.8-4slaves-root.txt"))
	if err != nil {
		b.Fatal(err)
	}
	bond, _, err := bonding.ParseProc("bond0", data)
	if err != nil {
		b.Fatal(err)
	}
	return &memSource{bond: bond, bytes: map[string][2]uint64{}}
}

func (m *memSource) Close() error { return nil }

// Read advances every counter by 100 ms of traffic.
func (m *memSource) Read() (collector.Reading, error) {
	m.step++
	b := m.bond
	b.Slaves = slices.Clone(m.bond.Slaves)
	var sum [2]uint64
	for i := range b.Slaves {
		name := b.Slaves[i].Name
		rx := wave(1e9+float64(i)*4e8, 5e8, m.step, 50, float64(i))
		tx := wave(2e9-float64(i)*3e8, 4e8, m.step, 35, float64(i))
		c := m.bytes[name]
		c[0] += uint64(rx / 80)
		c[1] += uint64(tx / 80)
		m.bytes[name] = c
		sum[0] += c[0]
		sum[1] += c[1]
		b.Slaves[i].Counters.Set(bonding.RxBytes, c[0])
		b.Slaves[i].Counters.Set(bonding.TxBytes, c[1])
	}
	b.Counters.Set(bonding.RxBytes, sum[0])
	b.Counters.Set(bonding.TxBytes, sum[1])
	return collector.Reading{Bonds: []bonding.Bond{b}}, nil
}

// BenchmarkTerminalFrame is one tick of the dashboard at 100 ms on an
// xterm-256color: sample, apply the snapshot, tview's draw (clear, panels,
// Show with the terminfo encoding of the changed cells). The history
// holds a minute already, so the graphs scroll as they do live. It reports
// the bytes sent to the terminal per frame.
// The frames go out through the painter, as the dashboard sends them, and
// through tcell's Show (the painter's fallback) for comparison.
func BenchmarkTerminalFrame(b *testing.B) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		for _, painted := range []bool{true, false} {
			name := fmt.Sprintf("%dx%d/tcell", size[0], size[1])
			if painted {
				name = fmt.Sprintf("%dx%d/painter", size[0], size[1])
			}
			b.Run(name, func(b *testing.B) { benchTerminalFrame(b, size[0], size[1], painted) })
		}
	}
}

// BenchmarkTerminalFrameOverlay is BenchmarkTerminalFrame's 160x48 frame
// through the painter with the help open over the panels, whose writes
// under it are dropped.
func BenchmarkTerminalFrameOverlay(b *testing.B) {
	benchTerminalFrame(b, 160, 48, true, overlayHelp)
}

func benchTerminalFrame(b *testing.B, width, height int, painted bool, overlay ...string) {
	d, tty, frame := terminalDashboard(b, width, height, painted)
	for range 600 {
		frame()
	}
	for _, name := range overlay {
		d.openOverlay(name)
	}
	b.ReportAllocs()
	tty.Written = 0
	cpu := cpuTime()
	for b.Loop() {
		frame()
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(tty.Written)/float64(b.N), "tty-bytes/op")
}

// terminalDashboard is a dashboard on tcell's real terminal screen over a
// nullTty, fed by a sampler whose counters move; frame takes a sample and
// draws it. painted: the frames go out through the painter, as they do on
// a user's terminal; otherwise through tcell's Show.
func terminalDashboard(tb testing.TB, width, height int, painted bool) (*dashboard, *termtest.NullTty, func()) {
	now := start
	s := collector.NewSampler(newMemSource(tb), collector.Options{
		Interval: 100 * time.Millisecond, Clock: func() time.Time { return now },
	})
	tick := func() *model.Snapshot {
		now = now.Add(100 * time.Millisecond)
		snap, err := s.Sample()
		if err != nil {
			tb.Fatal(err)
		}
		return snap
	}
	first := tick()
	ti, err := terminfo.LookupTerminfo("xterm-256color")
	if err != nil {
		tb.Fatal(err)
	}
	tty := termtest.NewNullTty(width, height)
	screen, err := tcell.NewTerminfoScreenFromTtyTerminfo(tty, ti)
	if err != nil {
		tb.Fatal(err)
	}
	o := Options{Feed: s, First: first, Screen: screen}
	if painted {
		o.terminfo = ti
	}
	d := newDashboard(o)
	tb.Cleanup(screen.Fini)
	return d, tty, func() {
		d.apply([]*model.Snapshot{tick()})
		d.app.ForceDraw()
	}
}

// TestOverlayFramesSendOnlyChanges: with an overlay open the frames send
// no more than without it (it hides changing panels). The panels' writes
// under it used to reach tcell before the overlay's, and tcell sends a
// cell written twice in a frame again: the whole overlay went out on
// every frame.
func TestOverlayFramesSendOnlyChanges(t *testing.T) {
	d, tty, frame := terminalDashboard(t, 160, 48, true)
	bytesOver := func(frames int) int64 {
		for range 5 {
			frame() // settle after a change of view
		}
		tty.Written = 0
		for range frames {
			frame()
		}
		return tty.Written
	}
	for range 600 {
		frame() // a minute of history: the graphs scroll
	}
	plain := bytesOver(50)
	d.openOverlay(overlayHelp)
	overlaid := bytesOver(50)
	if overlaid > plain {
		t.Fatalf("50 frames sent %d bytes with the help open, %d without: the overlay is sent again every frame", overlaid, plain)
	}
	t.Logf("50 frames: %d bytes without an overlay, %d with the help open", plain, overlaid)
}
