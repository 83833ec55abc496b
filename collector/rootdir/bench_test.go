package rootdir

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/internal/testtree"
)

// BenchmarkSamplerTickRoot is one sampler tick over a 4-slave root tree:
// list bonds, read and parse procfs, counters of five interfaces, rates,
// events, history. Sysfs configuration is cached between ticks, as it is in
// a run; the Sampler's clock moves a second a tick, so every fifth tick
// re-reads the host configuration (configRefreshEvery), which is most of
// what it allocates (TestSamplerTickAllocs counts a tick without).
func BenchmarkSamplerTickRoot(b *testing.B) { benchmarkTickRoot(b, false) }

// BenchmarkSamplerTickRootViaOSRoot is the same tick with every file
// opened through os.Root (one open and close per path component), as on
// kernels without openat2: the price of the fallback.
func BenchmarkSamplerTickRootViaOSRoot(b *testing.B) { benchmarkTickRoot(b, true) }

func benchmarkTickRoot(b *testing.B, viaOSRoot bool) {
	tr := testtree.FourSlave(b)
	src, err := New(tr.Dir)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	if viaOSRoot {
		closeDirFD(src.fsys.dirfd)
		src.fsys.dirfd = -1
	}
	clk := collectortest.NewClock(time.Unix(0, 0))
	s := collector.NewSampler(src, collector.Options{Interval: time.Second, Clock: clk.Now})
	if _, err := s.Sample(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		clk.Advance(time.Second)
		if _, err := s.Sample(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSamplerSteadyStateHeap checks that ticking does not grow the heap
// once the history rings are allocated: the snapshot of each tick is
// garbage after the next.
func TestSamplerSteadyStateHeap(t *testing.T) {
	tr := testtree.FourSlave(t)
	src, err := New(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	clk := collectortest.NewClock(time.Unix(0, 0))
	s := collector.NewSampler(src, collector.Options{Interval: time.Second, History: 100 * time.Second, Clock: clk.Now})
	tick := func(n int) {
		for range n {
			clk.Advance(time.Second)
			if _, err := s.Sample(); err != nil {
				t.Fatal(err)
			}
		}
	}
	tick(200) // rings full
	before := heapInUse()
	tick(2000)
	after := heapInUse()
	if grew := int64(after) - int64(before); grew > 256<<10 {
		t.Fatalf("heap grew by %d bytes over 2000 ticks", grew)
	}
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkSamplerTickRootNetDev is the same tick on a tree whose counters
// come from one /proc/net/dev file instead of fifty statistics files: the
// difference is the cost of file syscalls, which dominates root-source
// ticks.
func BenchmarkSamplerTickRootNetDev(b *testing.B) {
	tr := testtree.FourSlave(b)
	var netdev strings.Builder
	netdev.WriteString("Inter-|   Receive                                                |  Transmit\n")
	netdev.WriteString(" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n")
	for _, ifname := range []string{"lo", "eth9", "bond0", "e1", "e2", "e3", "e4"} {
		tr.Remove("sys/class/net/" + ifname + "/statistics")
		fmt.Fprintf(&netdev, "%6s: 1234567 890 0 0 0 0 0 0 7654321 98 0 0 0 0 0 0\n", ifname)
	}
	tr.Write("proc/net/dev", netdev.String())
	src, err := New(tr.Dir)
	if err != nil {
		b.Fatal(err)
	}
	clk := collectortest.NewClock(time.Unix(0, 0))
	s := collector.NewSampler(src, collector.Options{Interval: time.Second, Clock: clk.Now})
	snap, err := s.Sample()
	if err != nil {
		b.Fatal(err)
	}
	if snap.Bonds[0].Slaves[3].TxBytes == nil {
		b.Fatal("counters not read from /proc/net/dev")
	}
	b.ReportAllocs()
	for b.Loop() {
		clk.Advance(time.Second)
		if _, err := s.Sample(); err != nil {
			b.Fatal(err)
		}
	}
}
