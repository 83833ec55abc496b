//go:build linux

package flowmeter

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// The meter's cost per packet, measured by the kernel's own test run
// (BPF_PROG_TEST_RUN with a repeat count) against the floor: a TC program
// that returns at once, run on the same frames in the same loop, so a
// busy machine slows both alike. The benchmarks report, they do not judge
// (docs/flow-meter.md quotes them); they need root.

// perPacketRepeat is the test run's repeat count: long enough that the
// kernel's two clock reads around the loop vanish, short enough that a
// run falls between two interrupts.
const perPacketRepeat = 256

// udpFrames are n UDP/IPv4 frames of n flows (one source port each).
func udpFrames(n int) [][]byte {
	frames := make([][]byte, n)
	for i := range frames {
		f := hashVectors()[3].flow
		f.SrcPort = uint16(20000 + i)
		frames[i] = frameOf(f, 0)
	}
	return frames
}

// benchObjects loads the meter as Open would, with opts.
func benchObjects(b *testing.B, opts Options) *ebpfMeter {
	b.Helper()
	needRoot(b)
	m, err := openEBPF(opts.withDefaults())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

// perPacket runs each program on frames in turn (repeat times each, the
// programs' order rotating), and reports every program's median time per
// packet and its multiple of the first program's (the floor).
func perPacket(b *testing.B, names []string, progs []*ebpf.Program, frames [][]byte, repeat int) {
	b.Helper()
	ns := make([][]float64, len(progs))
	b.ResetTimer()
	for i := range b.N {
		fr := frames[i%len(frames)]
		for j := range progs {
			p := (i + j) % len(progs)
			ret, per, err := progs[p].Benchmark(fr, repeat, nil)
			if err != nil {
				b.Fatal(err)
			}
			if int32(ret) != -1 {
				b.Fatalf("%s returned %d, not TC_ACT_UNSPEC", names[p], int32(ret))
			}
			ns[p] = append(ns[p], float64(per.Nanoseconds()))
		}
	}
	b.StopTimer()
	floor := median(ns[0])
	b.ReportMetric(floor, names[0]+"-ns")
	for p := 1; p < len(progs); p++ {
		m := median(ns[p])
		b.ReportMetric(m, names[p]+"-ns")
		if floor > 0 {
			b.ReportMetric(m/floor, names[p]+"-x-floor")
		}
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// Packets of flows the meter already holds: 64 UDP/IPv4 flows, and an
// ICMPv6 error (the longest parse).
func BenchmarkPerPacket(b *testing.B) {
	for _, tc := range []struct {
		name   string
		frames [][]byte
	}{
		{"udp4-64-flows", udpFrames(64)},
		{"icmp6-error", [][]byte{frameOf(hashVectors()[7].flow, 0)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m := benchObjects(b, Options{Budget: -1})
			perPacket(b, []string{"floor", "ingress", "egress"},
				[]*ebpf.Program{nopProgram(b), m.objs.MeterIngress, m.objs.MeterEgress}, tc.frames, perPacketRepeat)
		})
	}
}

// Above the budget: a CPU counts 1 in N packets and skips the others
// after a random draw. (A budget of 1 000 packets per second: the test
// run's rate is far above it once the first rate window has passed.)
func BenchmarkPerPacketOverBudget(b *testing.B) {
	m := benchObjects(b, Options{Budget: 1000})
	frames := udpFrames(64)
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		if _, _, err := m.objs.MeterEgress.Benchmark(frames[0], 10000, nil); err != nil {
			b.Fatal(err)
		}
	}
	perPacket(b, []string{"floor", "ingress", "egress"},
		[]*ebpf.Program{nopProgram(b), m.objs.MeterIngress, m.objs.MeterEgress}, frames, perPacketRepeat)
	b.StopTimer()
	var r Reading
	if err := m.readCPUs(&r, bootNanos()); err != nil {
		b.Fatal(err)
	}
	rate := r.SampleRate
	if rate < 2 {
		b.Fatalf("the programs counted every packet (1 in %d) over budget", rate)
	}
	b.ReportMetric(float64(rate), "N")
}

// A full map: every packet's flow finds no entry and counts as lost.
func BenchmarkPerPacketMapFull(b *testing.B) {
	m := benchObjects(b, Options{MaxFlows: 64, Budget: -1})
	full := udpFrames(64)
	for _, fr := range full {
		if _, err := m.objs.MeterEgress.Run(&ebpf.RunOptions{Data: fr}); err != nil {
			b.Fatal(err)
		}
		if _, err := m.objs.MeterIngress.Run(&ebpf.RunOptions{Data: fr}); err != nil {
			b.Fatal(err)
		}
	}
	others := make([][]byte, 64)
	for i := range others {
		f := hashVectors()[3].flow
		f.Dst = netip.AddrFrom4([4]byte{10, 9, 0, byte(i)})
		others[i] = frameOf(f, 0)
	}
	perPacket(b, []string{"floor", "ingress", "egress"},
		[]*ebpf.Program{nopProgram(b), m.objs.MeterIngress, m.objs.MeterEgress}, others, perPacketRepeat)
}

// A flood of new flows: every packet is another flow (a test run of one
// packet per frame, so the kernel's clock reads around it weigh in; the
// floor pays them alike). Reports the median extra time over the floor.
func BenchmarkPerPacketNewFlow(b *testing.B) {
	m := benchObjects(b, Options{MaxFlows: max(1<<16, 4*b.N), Budget: -1})
	floor := nopProgram(b)
	progs := []*ebpf.Program{floor, m.objs.MeterIngress, m.objs.MeterEgress}
	names := []string{"floor", "ingress", "egress"}
	ns := make([][]float64, len(progs))
	f := hashVectors()[3].flow
	b.ResetTimer()
	for i := range b.N {
		// A flow the map has not seen: source address and port.
		f.Src = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		f.SrcPort = uint16(i)
		fr := frameOf(f, 0)
		for p := range progs {
			_, per, err := progs[p].Benchmark(fr, 1, nil)
			if err != nil {
				b.Fatal(err)
			}
			ns[p] = append(ns[p], float64(per.Nanoseconds()))
		}
		if m.objs.Flows.MaxEntries() <= uint32(2*(i+1)) {
			b.Fatal("the map filled up: raise MaxFlows")
		}
	}
	b.StopTimer()
	fl := median(ns[0])
	b.ReportMetric(fl, "floor-1-ns")
	for p := 1; p < len(progs); p++ {
		b.ReportMetric(median(ns[p])-fl, names[p]+"-new-extra-ns")
	}
}
