package diagnose

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/internal/bondtree"
	"github.com/bondtop/bondtop/model"
)

var windowSizes = []struct{ bonds, slaves int }{{1, 2}, {4, 4}, {64, 8}}

// BenchmarkFullWindowTick is one sampler tick at 100 ms with the
// diagnosis window (30 s) full: read a generated root tree of bonds ×
// slaves, rates, events, findings. No history is recorded (only the
// dashboard keeps one). ns/slave is the tick's cost per slave.
func BenchmarkFullWindowTick(b *testing.B) {
	for _, sz := range windowSizes {
		b.Run(fmt.Sprintf("%dx%d", sz.bonds, sz.slaves), func(b *testing.B) {
			tr, err := bondtree.Write(b.TempDir(), sz.bonds, sz.slaves)
			if err != nil {
				b.Fatal(err)
			}
			root, err := rootdir.New(tr.Dir)
			if err != nil {
				b.Fatal(err)
			}
			defer root.Close()
			now := time.Unix(1_700_000_000, 0)
			w := NewWindow(0)
			s := collector.NewSampler(&bondtree.MovingSource{Source: root}, collector.Options{
				Interval: 100 * time.Millisecond, Clock: func() time.Time { return now },
				Analyze: w.Fill, History: -1,
			})
			tick := func() {
				now = now.Add(100 * time.Millisecond)
				if _, err := s.Sample(); err != nil {
					b.Fatal(err)
				}
			}
			for range int(DefaultWindow/(100*time.Millisecond)) + 10 {
				tick()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				tick()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sz.bonds*sz.slaves), "ns/slave")
			// What the full window holds: the heap in use after a
			// collection, with the sampler and the window alive.
			var m runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m)
			b.ReportMetric(float64(m.HeapInuse)/(1<<20), "MB-heap")
			runtime.KeepAlive(s)
		})
	}
}

// BenchmarkFloorTick is the floor of BenchmarkFullWindowTick: open and
// read the files a tick reads, and nothing else.
func BenchmarkFloorTick(b *testing.B) {
	for _, sz := range windowSizes {
		b.Run(fmt.Sprintf("%dx%d", sz.bonds, sz.slaves), func(b *testing.B) {
			tr, err := bondtree.Write(b.TempDir(), sz.bonds, sz.slaves)
			if err != nil {
				b.Fatal(err)
			}
			files := tr.TickFiles()
			buf := make([]byte, 64<<10)
			b.ReportAllocs()
			for b.Loop() {
				for _, f := range files {
					if err := readInto(f, buf); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sz.bonds*sz.slaves), "ns/slave")
		})
	}
}

func readInto(path string, buf []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		n, err := f.Read(buf)
		if n == 0 || err != nil {
			return nil
		}
	}
}

// BenchmarkWindowFill is the diagnosis alone on a full window at 100 ms:
// Window.Fill on snapshots sampled beforehand (bonds × slaves of a
// generated tree whose counters move), not the reading. Its budget is
// no allocation (a tick's findings are those of the last judgement, or
// made again into slices the window reuses). BenchmarkFullWindowTick
// says what the full window holds (MB-heap).
func BenchmarkWindowFill(b *testing.B) {
	for _, sz := range []struct{ bonds, slaves int }{{1, 4}, {4, 4}} {
		b.Run(fmt.Sprintf("%dx%d", sz.bonds, sz.slaves), func(b *testing.B) {
			fill := fullWindow(b, sz.bonds, sz.slaves)
			// Over 30 s of ticks at once, so that an allocation once
			// in a while shows too.
			ticks := int(DefaultWindow / (100 * time.Millisecond))
			steady := testing.AllocsPerRun(1, func() {
				for range ticks {
					fill()
				}
			}) / float64(ticks)
			b.ReportAllocs()
			for b.Loop() {
				fill()
			}
			b.ReportMetric(steady, "steady-allocs/tick")
			b.ReportMetric(0, "budget-allocs/tick")
		})
	}
}

// fullWindow samples 1000 snapshots at 100 ms of a generated tree of
// bonds × slaves whose counters move, fills a Window until its span is
// full, and returns the next tick: Fill on the next snapshot (they come
// round again, restamped, so the window's clock keeps going).
func fullWindow(tb testing.TB, bonds, slaves int) (fill func()) {
	tb.Helper()
	tr, err := bondtree.Write(tb.TempDir(), bonds, slaves)
	if err != nil {
		tb.Fatal(err)
	}
	root, err := rootdir.New(tr.Dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { root.Close() })
	start := time.Unix(1_700_000_000, 0)
	now := start
	s := collector.NewSampler(&bondtree.MovingSource{Source: root}, collector.Options{
		Interval: 100 * time.Millisecond, Clock: func() time.Time { return now }, History: -1,
	})
	snaps := make([]*model.Snapshot, 1000)
	for i := range snaps {
		now = now.Add(100 * time.Millisecond)
		if snaps[i], err = s.Sample(); err != nil {
			tb.Fatal(err)
		}
	}
	w := NewWindow(0)
	i := 0
	fill = func() {
		snap := snaps[i%len(snaps)]
		snap.Time = start.Add(time.Duration(i) * 100 * time.Millisecond)
		w.Fill(snap)
		i++
	}
	for range int(DefaultWindow/(100*time.Millisecond)) + 10 {
		fill()
	}
	return fill
}
