package ui

import (
	"runtime"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
	"github.com/gdamore/tcell/v2"
)

// An hour of history, fast-forwarded: the dashboard's memory once the
// rings are full and the 1 h window is on screen. The history rings are
// sized at start for an hour at the pace chosen, so this is the most the
// dashboard holds, however long it runs.
func TestHourOfHistoryMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("fills an hour of samples")
	}
	for _, interval := range []time.Duration{time.Second, 100 * time.Millisecond} {
		t.Run(interval.String(), func(t *testing.T) {
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)

			now := start
			s := collector.NewSampler(newMemSource(t), collector.Options{
				Interval: interval, Clock: func() time.Time { return now },
			})
			sample := func() *model.Snapshot {
				now = now.Add(interval)
				snap, err := s.Sample()
				if err != nil {
					t.Fatal(err)
				}
				return snap
			}
			screen := tcell.NewSimulationScreen("UTF-8")
			d := newDashboard(Options{Feed: s, First: sample(), Screen: screen})
			screen.SetSize(160, 48)
			sm := &sim{t: t, d: d, screen: screen}
			sm.press("gg") // the 1 h window
			n := int(time.Hour / interval)
			for i := range n {
				snap := sample()
				if i%100 == 0 || i == n-1 {
					// Draw now and then: the dashboard applies every
					// snapshot, the screen follows at its own pace.
					d.apply([]*model.Snapshot{snap})
					sm.draw()
				} else {
					d.model.Apply(snap)
				}
			}
			mustContain(t, sm.text(), "-1h")

			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			grown := float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
			t.Logf("an hour at %v: %d samples; heap grew %.1f MB (history rings of %d samples a series, the screen's cell buffers, the model)",
				interval, n, grown, s.History().Capacity())
			// The process adds the Go runtime and the binary's pages
			// (about 10 MB): the heap must leave RSS under 20 MB.
			if grown > 10 {
				t.Errorf("heap grew %.1f MB with an hour of history, want at most 10 MB", grown)
			}
			runtime.KeepAlive(d)
		})
	}
}
