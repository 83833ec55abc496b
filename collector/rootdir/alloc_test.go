package rootdir

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/internal/testtree"
	"github.com/bondtop/bondtop/model"
)

// advancingCounters moves the byte counters of bond0's slaves in a
// fourSlaveTree forward, in place, through files opened once: a tick then
// has rates and shares to compute, and the test allocates nothing between
// ticks (testing.AllocsPerRun counts the test's allocations too).
type advancingCounters struct {
	files []*os.File
	buf   []byte
	n     uint64
}

func newAdvancingCounters(tb testing.TB, tr *testtree.Tree) *advancingCounters {
	a := &advancingCounters{buf: make([]byte, 0, 32)}
	for _, s := range []string{"e1", "e2", "e3", "e4"} {
		for _, c := range []string{"rx_bytes", "tx_bytes"} {
			f, err := os.OpenFile(filepath.Join(tr.Dir, "sys/class/net", s, "statistics", c), os.O_WRONLY, 0)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { f.Close() })
			a.files = append(a.files, f)
		}
	}
	a.step()
	return a
}

// step adds a different amount to each counter; the text keeps its
// twelve digits, so each write replaces the whole file.
func (a *advancingCounters) step() {
	a.n += 1_000_000
	for i, f := range a.files {
		a.buf = strconv.AppendUint(a.buf[:0], 100_000_000_000+a.n*uint64(i+1), 10)
		a.buf = append(a.buf, '\n')
		if _, err := f.WriteAt(a.buf, 0); err != nil {
			panic(err)
		}
	}
}

// tickingRoot is a Sampler over a fourSlaveTree at 100 ms with the
// default history, the tree's clock and the Sampler's one fake clock,
// warmed up: its history rings are full and every cache is filled.
//
// With recycle, the Sampler recycles (Options.Recycle) and each tick
// hands back the snapshot before it, as a dashboard does once the next
// one is on screen.
func tickingRoot(tb testing.TB, recycle bool) *rootTicker {
	return tickingRootWith(tb, recycle, nil)
}

// tickingRootWith is tickingRoot with options of the test's (set).
func tickingRootWith(tb testing.TB, recycle bool, set func(*collector.Options)) *rootTicker {
	tr := testtree.FourSlave(tb)
	counters := newAdvancingCounters(tb, tr)
	src, err := New(tr.Dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { src.Close() })
	clk := collectortest.NewClock(time.Unix(1_000_000, 0))
	src.clock = clk.Now
	// The tree was written a moment ago; a dashboard's tree has been
	// quiet for longer than keepQuiet, and its statistics files are read
	// through descriptors kept open (rootkeep_linux.go).
	src.fsys.now = func() time.Time { return time.Now().Add(time.Hour) }
	opts := collector.Options{Interval: collector.MinInterval, Clock: clk.Now, Recycle: recycle}
	if set != nil {
		set(&opts)
	}
	s := collector.NewSampler(src, opts)
	rt := &rootTicker{tb: tb, s: s, clk: clk, counters: counters, recycle: recycle}
	// 70 s: the fine rings (a minute at 100 ms) are full, and the last
	// tick re-read the configuration (every 5 s) and sysfs.
	for range 700 {
		rt.tick()
	}
	if sh := rt.snap.Bonds[0].Slaves[3].ShareTx; sh == nil || math.Abs(*sh-0.4) > 0.01 {
		tb.Fatalf("e4's tx share %v, want 0.4 (its counter moves 8 of the 20 steps)", sh)
	}
	return rt
}

// rootTicker ticks a Sampler over a fourSlaveTree whose counters move.
type rootTicker struct {
	tb       testing.TB
	s        *collector.Sampler
	clk      *collectortest.Clock
	counters *advancingCounters
	snap     *model.Snapshot // the latest
	recycle  bool            // hand snap back before the next tick
}

func (rt *rootTicker) tick() {
	rt.counters.step()
	rt.clk.Advance(collector.MinInterval)
	if rt.recycle {
		rt.s.Release(rt.snap)
	}
	var err error
	if rt.snap, err = rt.s.Sample(); err != nil {
		rt.tb.Fatal(err)
	}
}

func (rt *rootTicker) sample() *model.Snapshot {
	rt.tick()
	return rt.snap
}

// maxTickAllocs is what a steady tick over a --root tree allocates when
// its snapshots are not handed back: the Snapshot, its bonds, one array
// for all their slaves and one for the numbers of their traffic. The
// Reading's arrays come back to the source once the Sampler has let them
// go (recycle.go). Handed back (Options.Recycle, as the dashboard does),
// a steady tick allocates nothing. These are budgets, reported by the
// benchmarks (make bench, docs/performance.md), not tests: a Go release
// may move them.
const maxTickAllocs = 4

// TestSteadyTicksDoNotGrow: thousands of steady ticks over a --root tree
// hold no more memory than the first thousand did, snapshots handed back
// or not: whatever a tick allocates, it lets go of. The history is a
// minute, full after the first 600 ticks.
func TestSteadyTicksDoNotGrow(t *testing.T) {
	short := func(o *collector.Options) { o.History = time.Minute }
	collectortest.CheckNoGrowth(t, "handed back", tickingRootWith(t, true, short).tick)
	collectortest.CheckNoGrowth(t, "kept by nobody", tickingRootWith(t, false, short).tick)
}

// BenchmarkSamplerTickRootKept is BenchmarkSamplerTickRootSteady with
// its snapshots not handed back (as --count --json with a metrics
// server): maxTickAllocs is its budget.
func BenchmarkSamplerTickRootKept(b *testing.B) {
	root := tickingRoot(b, false)
	steady := collectortest.SteadyAllocs(root.tick)
	b.ReportAllocs()
	for b.Loop() {
		root.tick()
	}
	collectortest.ReportBudget(b, steady, maxTickAllocs)
}

// BenchmarkSamplerTickRootSteady is a steady tick over a --root tree
// (counters that move, a full history at 100 ms), its snapshots handed
// back; the configuration's re-read comes every 50 ticks. Its budget is
// no allocation.
func BenchmarkSamplerTickRootSteady(b *testing.B) {
	root := tickingRoot(b, true)
	steady := collectortest.SteadyAllocs(root.tick)
	b.ReportAllocs()
	for b.Loop() {
		root.tick()
	}
	collectortest.ReportBudget(b, steady, 0)
}

// TestSnapshotsStayAsHandedOut: a snapshot reads the same after later
// ticks (the dashboard keeps the one on screen while paused, the
// diagnosis keeps a window of them), though ticks reuse buffers, memos
// and merged bonds: nothing handed out is written again. Over the demo
// (neighbours, LACPDU counters, flows, meter) and a --root tree whose
// counters move.
func TestSnapshotsStayAsHandedOut(t *testing.T) {
	clk := collectortest.NewClock(time.Unix(1_000_000, 0))
	demoSampler := collector.NewSampler(demo.New(clk.Now), collector.Options{Interval: time.Second, Clock: clk.Now})
	root := tickingRoot(t, false)
	for _, c := range []struct {
		name   string
		sample func() *model.Snapshot
	}{
		{"demo", func() *model.Snapshot {
			clk.Advance(time.Second)
			snap, err := demoSampler.Sample()
			if err != nil {
				t.Fatal(err)
			}
			return snap
		}},
		{"root", root.sample},
	} {
		for range 3 {
			c.sample()
		}
		kept := c.sample()
		before := collectortest.JSONOf(t, kept)
		for range 12 {
			c.sample()
		}
		if after := collectortest.JSONOf(t, kept); after != before {
			t.Errorf("%s: a snapshot changed after later ticks:\nbefore %s\nafter  %s", c.name, before, after)
		}
	}
}
