package collector

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fourSlaveTree writes an 802.3ad bond0 over e1..e4: procfs from the
// healthy 6.8 capture, sysfs, and statistics files.
func fourSlaveTree(tb testing.TB) *tree {
	tr := newTree(tb)
	proc, err := os.ReadFile("../bonding/testdata/proc/8023ad-6.8-healthy-root.txt")
	if err != nil {
		tb.Fatal(err)
	}
	tr.write("proc/net/bonding/bond0", string(proc))
	tr.write("sys/class/net/bonding_masters", "bond0\n")
	tr.write("sys/class/net/bond0/bonding/mode", "802.3ad 4\n")
	tr.write("sys/class/net/bond0/bonding/slaves", "e1 e2 e3 e4\n")
	tr.counters("bond0", 1, 1)
	for _, s := range []string{"e1", "e2", "e3", "e4"} {
		tr.write("sys/class/net/"+s+"/bonding_slave/state", "active\n")
		tr.write("sys/class/net/"+s+"/bonding_slave/mii_status", "up\n")
		tr.write("sys/class/net/"+s+"/mtu", "1500\n")
		tr.counters(s, 1, 1)
	}
	return tr
}

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
	tr := fourSlaveTree(b)
	src, err := NewRootSource(tr.dir)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	if viaOSRoot {
		closeDirFD(src.fsys.dirfd)
		src.fsys.dirfd = -1
	}
	clk := &fakeClock{now: time.Unix(0, 0)}
	s := NewSampler(src, Options{Interval: time.Second, Clock: clk.Now})
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
	tr := fourSlaveTree(t)
	src, err := NewRootSource(tr.dir)
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{now: time.Unix(0, 0)}
	s := NewSampler(src, Options{Interval: time.Second, History: 100 * time.Second, Clock: clk.Now})
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
	tr := fourSlaveTree(b)
	var netdev strings.Builder
	netdev.WriteString("Inter-|   Receive                                                |  Transmit\n")
	netdev.WriteString(" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n")
	for _, ifname := range []string{"lo", "eth9", "bond0", "e1", "e2", "e3", "e4"} {
		tr.remove("sys/class/net/" + ifname + "/statistics")
		fmt.Fprintf(&netdev, "%6s: 1234567 890 0 0 0 0 0 0 7654321 98 0 0 0 0 0 0\n", ifname)
	}
	tr.write("proc/net/dev", netdev.String())
	src, err := NewRootSource(tr.dir)
	if err != nil {
		b.Fatal(err)
	}
	clk := &fakeClock{now: time.Unix(0, 0)}
	s := NewSampler(src, Options{Interval: time.Second, Clock: clk.Now})
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
