//go:build linux

package guest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/drill"
	"github.com/bondtop/bondtop/model"
)

// TestLiveTickCost weighs the live sampler's tick against the two kernel
// reads it cannot do without, in one process on a real 4-slave 802.3ad
// bond: the floor is one RTM_GETLINK dump on a persistent rtnetlink socket
// (the messages received, not decoded) plus one read of
// /proc/net/bonding/bond0 into a reused buffer. A second floor does the
// same two reads at their cheapest: a socket connected to the kernel,
// read(2) into a kept buffer, and pread(2) of the file kept open (what
// the live source does itself since it stopped using the library's
// exchange per request): the tick against it is the cost of everything
// but the two reads. Then, step by step, what
// the product does: the live source's Read (decoding, procfs parse, the
// cached sysfs), the LACPDU counters the Sampler asks for once a second,
// the Sampler's tick as the dashboard runs it without a history (rates,
// events, the neighbour and physical trackers), and that tick with the
// diagnosis; beside them, cheaper ways to read the procfs file and the
// LACPDU counters, for the report. Each step runs alone for its
// allocations, then all in turn in one testing.Benchmark for the times
// and the ratios to the floor (the goal: the tick at most 1.5
// times the floor). It fails only when something does not work (no bond,
// a read or sample error), never on a time: speed is judged from the
// figures, not by a timed test.
func TestLiveTickCost(t *testing.T) {
	p, _ := lacpPair(t, 180, 4)
	const procFile = "/proc/net/bonding/bond0"

	sock, err := nl.GetNetlinkSocketAt(netns.None(), netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatalf("rtnetlink socket: %v", err)
	}
	t.Cleanup(sock.Close)
	sockets := map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: {Socket: sock}}
	dump := func() (int, error) {
		req := &nl.NetlinkRequest{
			NlMsghdr: unix.NlMsghdr{Len: unix.SizeofNlMsghdr, Type: unix.RTM_GETLINK, Flags: unix.NLM_F_REQUEST | unix.NLM_F_DUMP},
			Sockets:  sockets,
		}
		req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
		links := 0
		err := req.ExecuteIter(unix.NETLINK_ROUTE, unix.RTM_NEWLINK, func([]byte) bool { links++; return true })
		return links, err
	}
	buf := make([]byte, 64<<10)
	readProc := func() (int, error) {
		f, err := os.Open(procFile)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		total := 0
		for {
			if total == len(buf) {
				return total, fmt.Errorf("%s: larger than %d bytes", procFile, len(buf))
			}
			n, err := f.Read(buf[total:])
			total += n
			if errors.Is(err, io.EOF) || (n == 0 && err == nil) {
				return total, nil
			}
			if err != nil {
				return total, err
			}
		}
	}
	// The live source's way to the LACPDU counters, through the library:
	// one dump of every link's slave statistics, the LACPDU counters of
	// each slave in it (port_counters below is the product's own).
	statsDump := func() (int, error) {
		req := &nl.NetlinkRequest{
			NlMsghdr: unix.NlMsghdr{Len: unix.SizeofNlMsghdr, Type: unix.RTM_GETSTATS, Flags: unix.NLM_F_REQUEST | unix.NLM_F_DUMP},
			Sockets:  sockets,
		}
		hdr := make([]byte, bonding.SizeofIfStatsMsg)
		binary.NativeEndian.PutUint32(hdr[8:], bonding.StatsFilterSlaveXstats)
		req.AddRawData(hdr)
		counted := 0
		err := req.ExecuteIter(unix.NETLINK_ROUTE, unix.RTM_NEWSTATS, func(msg []byte) bool {
			if c, ok := bonding.ParseLACPDUStats(msg); ok && c != nil {
				counted++
			}
			return true
		})
		return counted, err
	}
	// The lean floor: the same dump on a socket connected to the kernel
	// (no sender address to decode), request and receive buffer kept;
	// the file kept open and read from offset 0 (procfs generates it
	// anew).
	lean, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatalf("rtnetlink socket: %v", err)
	}
	t.Cleanup(func() { unix.Close(lean) })
	if err := unix.Connect(lean, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		t.Fatalf("connect rtnetlink socket: %v", err)
	}
	leanReq := make([]byte, unix.SizeofNlMsghdr+unix.SizeofIfInfomsg)
	leanBuf := make([]byte, 64<<10)
	var leanSeq uint32
	leanDump := func() (int, error) {
		leanSeq++
		binary.NativeEndian.PutUint32(leanReq[0:], uint32(len(leanReq)))
		binary.NativeEndian.PutUint16(leanReq[4:], unix.RTM_GETLINK)
		binary.NativeEndian.PutUint16(leanReq[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
		binary.NativeEndian.PutUint32(leanReq[8:], leanSeq)
		if _, err := unix.Write(lean, leanReq); err != nil {
			return 0, err
		}
		links := 0
		for {
			n, err := unix.Read(lean, leanBuf)
			if err != nil {
				return links, err
			}
			for b := leanBuf[:n]; len(b) >= unix.SizeofNlMsghdr; {
				l := int(binary.NativeEndian.Uint32(b[0:]))
				typ := binary.NativeEndian.Uint16(b[4:])
				seq := binary.NativeEndian.Uint32(b[8:])
				if l < unix.SizeofNlMsghdr || l > len(b) {
					return links, fmt.Errorf("malformed netlink message of %d bytes", l)
				}
				switch {
				case seq != leanSeq:
				case typ == unix.NLMSG_DONE:
					return links, nil
				case typ == unix.NLMSG_ERROR:
					return links, fmt.Errorf("netlink error %d", int32(binary.NativeEndian.Uint32(b[unix.SizeofNlMsghdr:])))
				case typ == unix.RTM_NEWLINK:
					links++
				}
				b = b[min((l+3)&^3, len(b)):]
			}
		}
	}
	keptProc, err := os.Open(procFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keptProc.Close() })
	leanProc := func() (int, error) {
		n, err := keptProc.ReadAt(buf, 0)
		switch {
		case errors.Is(err, io.EOF):
			return n, nil
		case err == nil:
			return n, fmt.Errorf("%s: larger than %d bytes", procFile, len(buf))
		}
		return n, err
	}

	// The floor's reads must see the bond: the dump its links, the file
	// its slaves.
	links, err := dump()
	if err != nil {
		t.Fatalf("RTM_GETLINK dump: %v", err)
	}
	if links < 1+len(p.Slaves) {
		t.Fatalf("RTM_GETLINK dump: %d links, want the bond and its %d slaves at least", links, len(p.Slaves))
	}
	n, err := readProc()
	if err != nil || n == 0 {
		t.Fatalf("%s: %d bytes, %v", procFile, n, err)
	}
	if parsed, _, err := bonding.ParseProcReport(p.Bond, buf[:n]); err != nil || len(parsed.Slaves) != len(p.Slaves) {
		t.Fatalf("%s: %d slaves parsed, want %d (%v)", procFile, len(parsed.Slaves), len(p.Slaves), err)
	}
	if l, err := leanDump(); err != nil || l != links {
		t.Fatalf("lean RTM_GETLINK dump: %d links (%v), the library's %d", l, err, links)
	}
	for range 2 { // the second read is from offset 0 of the kept file
		if m, err := leanProc(); err != nil || m != n {
			t.Fatalf("%s kept open: %d bytes (%v), a fresh read %d", procFile, m, err, n)
		}
	}
	if n, err := statsDump(); err != nil || n != len(p.Slaves) {
		t.Fatalf("RTM_GETSTATS dump: LACPDU counters of %d slaves, want %d (%v)", n, len(p.Slaves), err)
	}

	newSource := func() *live.Source {
		src, err := live.New()
		if err != nil {
			t.Fatalf("live.New: %v", err)
		}
		t.Cleanup(func() { src.Close() })
		return src
	}
	// The dashboard's options at 10 Hz, without a history (the history's
	// cost is the history's own) and without the flow table and meter
	// (the flows view's, and no flows run here). Each Sampler has a
	// source of its own, as each bondtop process has, and the source read
	// alone is a third.
	// Each Sampler's clock moves 100 ms a tick, whatever time the loop
	// below takes: what the Sampler does once a second of its clock (the
	// LACPDU counters, the diagnosis) comes every tenth tick, as in the
	// dashboard at 100 ms, and the mean carries its share.
	paced := func() func() time.Time {
		at := time.Now()
		return func() time.Time { at = at.Add(100 * time.Millisecond); return at }
	}
	// Both hand back each snapshot at the next tick, as the dashboard
	// does (Options.Recycle).
	tick := collector.NewSampler(newSource(), collector.Options{Interval: 100 * time.Millisecond, History: collector.NoHistory, Clock: paced(), Recycle: true})
	// The diagnosis as the live dashboard runs it (cmd/bondtop's
	// samplerOptions): the window, and the look for a killed drill.
	diagnosed := collector.NewSampler(newSource(), collector.Options{Interval: 100 * time.Millisecond, History: collector.NoHistory,
		Clock: paced(), Analyze: drill.WithLeftBehind(diagnose.NewWindow(0).Fill, drill.DefaultStateDir), Recycle: true})
	for _, s := range []*collector.Sampler{tick, diagnosed} {
		warm := 3 // past the baseline and the first reads of sysfs
		if s == diagnosed {
			// And past the diagnosis' window filling (its first 30 s of
			// the Sampler's clock, when each tick keeps one more sample
			// in an array of its own): a steady tick is one whose oldest
			// sample leaves as the new one comes.
			warm += int(diagnose.DefaultWindow / (100 * time.Millisecond))
		}
		for range warm {
			snap, err := s.Sample()
			if err != nil {
				t.Fatalf("sample: %v", err)
			}
			if b := BondIn(t, snap, p.Bond); len(b.Slaves) != len(p.Slaves) {
				t.Fatalf("bondtop shows %d slaves of %s, want %d", len(b.Slaves), p.Bond, len(p.Slaves))
			}
		}
	}
	reader := newSource()
	var lastTick, lastDiagnosed *model.Snapshot
	if r, err := reader.Read(); err != nil || r.Bond(p.Bond) == nil {
		t.Fatalf("live read: bond %s missing (%v)", p.Bond, err)
	}

	lacpdus, carriers := map[string]bonding.LACPDUCounters{}, map[string]*bonding.CarrierCounts{}
	// The steps, cheapest first: the floor's two reads, then what the
	// product does. port_counters is a part of the tick, weighed alone:
	// the LACPDU counters the Sampler asks the source for once a second
	// (one RTM_GETSTATS dump), and the carrier counts of the link dump it
	// takes on every tick.
	steps := []struct {
		name string
		op   func() error
	}{
		{"floor_dump", func() error { _, err := dump(); return err }},
		{"floor_proc", func() error { _, err := readProc(); return err }},
		{"floor", func() error {
			if _, err := dump(); err != nil {
				return err
			}
			_, err := readProc()
			return err
		}},
		{"floor_lean", func() error {
			if _, err := leanDump(); err != nil {
				return err
			}
			_, err := leanProc()
			return err
		}},
		{"proc_parse", func() error {
			n, err := readProc()
			if err != nil {
				return err
			}
			_, _, err = bonding.ParseProcReport(p.Bond, buf[:n])
			return err
		}},
		{"proc_readfile_parse", func() error {
			// The live source's old way: os.ReadFile, which stats the
			// file, and grows its buffer from 512 bytes for a procfs file
			// that says its size is 0, one read each.
			data, err := os.ReadFile(procFile)
			if err != nil {
				return err
			}
			_, _, err = bonding.ParseProcReport(p.Bond, data)
			return err
		}},
		{"lacpdu_dump", func() error { _, err := statsDump(); return err }},
		{"live_read", func() error { _, err := reader.Read(); return err }},
		{"port_counters", func() error {
			clear(lacpdus)
			if reader.LACPDUCounters(p.Slaves, lacpdus); len(lacpdus) != len(p.Slaves) {
				return fmt.Errorf("LACPDU counters of %d slaves, want %d", len(lacpdus), len(p.Slaves))
			}
			clear(carriers)
			if reader.CarrierCounts(p.Slaves, carriers); len(carriers) != len(p.Slaves) {
				return fmt.Errorf("carrier counts of %d slaves, want %d", len(carriers), len(p.Slaves))
			}
			return nil
		}},
		{"live_tick", func() error { return sampleAgain(tick, &lastTick) }},
		{"live_tick_diagnosed", func() error { return sampleAgain(diagnosed, &lastDiagnosed) }},
	}
	// Each step alone, for its allocations (exact; the times come from
	// the paired run below). A hundred runs: a whole benchmark per step
	// would add seconds of emulated CPU to the lab for nothing. Each run
	// is counted on its own: the median is a steady tick's, the mean
	// (what testing.AllocsPerRun gives) includes what the Sampler does
	// every few seconds of its clock (the LACPDU counters every second,
	// the configuration files every 5 s, host settings and the ethtool
	// link state every 10 s). Other goroutines' allocations (the packet
	// sockets' reads, link notifications) count too, as in AllocsPerRun;
	// the median leaves them out.
	for _, st := range steps {
		var opErr error
		op := func() {
			if err := st.op(); err != nil && opErr == nil {
				opErr = err
			}
		}
		mean, median := allocsPerOp(100, op)
		if opErr != nil {
			t.Fatalf("%s: %v", st.name, opErr)
		}
		Measure(t, "tick_allocs_"+st.name+"[slaves=4]", mean, "allocs/op")
		Measure(t, "tick_allocs_median_"+st.name+"[slaves=4]", median, "allocs/op")
		if (st.name == "live_tick" || st.name == "live_tick_diagnosed") && median > maxSteadyTickAllocs {
			t.Errorf("%s: a steady live tick allocates %v times (median of 100), want at most %d", st.name, median, maxSteadyTickAllocs)
		}
	}
	// The ratios come from one benchmark whose every iteration runs every
	// step in turn, each timed: the floor and the tick see the same
	// moments of a noisy host, so their ratio holds where separate runs'
	// times wander. Each iteration starts one step further, so that no
	// step always follows the one whose garbage the collector is busy
	// with; three runs, summed, for more iterations.
	// Every op's time is kept: the mean includes the live source's
	// configuration refresh (sysfs and ethtool, every 10 s), the median
	// is a tick without it.
	took := make([][]time.Duration, len(steps))
	// How often the collector ran, against the iterations of every
	// benchmark call (the library's reads and os.ReadFile leave garbage
	// each iteration; a steady tick, none).
	var iterations int
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gcBefore := ms.NumGC
	for range 3 {
		var opErr error
		var round [][]time.Duration
		res := testing.Benchmark(func(b *testing.B) {
			round = make([][]time.Duration, len(steps))
			iterations += b.N
			for k := range b.N {
				for j := range steps {
					i := (k + j) % len(steps)
					start := time.Now()
					if opErr = steps[i].op(); opErr != nil {
						return
					}
					round[i] = append(round[i], time.Since(start))
				}
			}
		})
		if opErr != nil {
			t.Fatal(opErr)
		}
		if res.N == 0 {
			t.Fatal("the paired benchmark did not run")
		}
		for i := range took {
			took[i] = append(took[i], round[i]...)
		}
	}
	runtime.ReadMemStats(&ms)
	Measure(t, "tick_paired_gc_per_1000_iterations[slaves=4]", float64(ms.NumGC-gcBefore)*1000/float64(iterations), "")
	mean, median := map[string]float64{}, map[string]float64{}
	for i, st := range steps {
		var sum time.Duration
		for _, d := range took[i] {
			sum += d
		}
		slices.Sort(took[i])
		mean[st.name] = float64(sum.Nanoseconds()) / float64(len(took[i]))
		median[st.name] = float64(took[i][len(took[i])/2].Nanoseconds())
		Measure(t, "tick_paired_mean_"+st.name+"[slaves=4]", mean[st.name]/1000, "µs/op")
		Measure(t, "tick_paired_median_"+st.name+"[slaves=4]", median[st.name]/1000, "µs/op")
		Measure(t, "tick_paired_max_"+st.name+"[slaves=4]", float64(took[i][len(took[i])-1].Microseconds()), "µs")
	}
	if mean["floor"] <= 0 || median["floor"] <= 0 || median["floor_lean"] <= 0 {
		t.Fatal("the floor took no time: the clock or the benchmark is broken")
	}
	for _, name := range []string{"live_tick", "live_read", "port_counters", "live_tick_diagnosed", "proc_parse", "proc_readfile_parse", "lacpdu_dump"} {
		Measure(t, "tick_ratio_mean_"+name+"_to_floor[slaves=4]", mean[name]/mean["floor"], "x")
		Measure(t, "tick_ratio_median_"+name+"_to_floor[slaves=4]", median[name]/median["floor"], "x")
	}
	for _, name := range []string{"live_tick", "live_read", "live_tick_diagnosed", "floor"} {
		Measure(t, "tick_ratio_mean_"+name+"_to_floor_lean[slaves=4]", mean[name]/mean["floor_lean"], "x")
		Measure(t, "tick_ratio_median_"+name+"_to_floor_lean[slaves=4]", median[name]/median["floor_lean"], "x")
	}
}

// maxSteadyTickAllocs is what a steady live tick at 100 ms may allocate
// on a real 4-slave 802.3ad bond, its snapshots handed back (the
// Sampler's own guard on the host is collector's TestLiveTickAllocs):
// nothing. The snapshot, its switch sides (new every tick while the
// packet sockets hear the partner) and the reading are filled again.
const maxSteadyTickAllocs = 0

// sampleAgain hands back *last and samples into it, as the dashboard
// hands back the snapshot it replaces.
func sampleAgain(s *collector.Sampler, last **model.Snapshot) error {
	s.Release(*last)
	snap, err := s.Sample()
	*last = snap
	return err
}

// allocsPerOp runs op once to warm up, then n times, counting each run's
// allocations (with GOMAXPROCS at 1, as testing.AllocsPerRun does): the
// mean and the median.
func allocsPerOp(n int, op func()) (mean, median float64) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	op()
	counts := make([]uint64, n)
	var ms runtime.MemStats
	var total uint64
	for i := range counts {
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		op()
		runtime.ReadMemStats(&ms)
		counts[i] = ms.Mallocs - before
		total += counts[i]
	}
	slices.Sort(counts)
	return float64(total) / float64(n), float64(counts[n/2])
}
