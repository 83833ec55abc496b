//go:build linux

package flowmeter

import (
	"math"
	"testing"
)

// Below its budget the meter counts every packet; above it a CPU counts
// 1 in N, scales what it counts by N, marks the flow sampled and reports
// N. The kernel's test run plays the packets (one CPU, tens of millions of
// packets a second).
func TestBudgetSamplesAboveIt(t *testing.T) {
	needRoot(t)
	const budget = 100_000
	m, err := openEBPF(Options{Budget: budget}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// The test run's packets come from the loopback device.
	m.slaves[1] = &attachment{ifindex: 1, name: "lo"}
	frame := udpFrames(1)[0]
	flow := func() Flow {
		t.Helper()
		r, err := m.Read()
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Flows) != 1 {
			t.Fatalf("%d flows, want 1: %+v", len(r.Flows), r.Flows)
		}
		return r.Flows[0]
	}

	// A few packets: every one counted, exactly.
	if _, _, err := m.objs.MeterEgress.Benchmark(frame, 100, nil); err != nil {
		t.Fatal(err)
	}
	if f := flow(); f.Packets != 100 || f.Bytes != uint64(100*len(frame)) || f.Sampled {
		t.Fatalf("below the budget: %d packets %d bytes (sampled %v), want 100 and %d", f.Packets, f.Bytes, f.Sampled, 100*len(frame))
	}

	// Millions of packets as fast as the CPU runs them.
	const runs, repeat = 8, 500_000
	for range runs {
		if _, _, err := m.objs.MeterEgress.Benchmark(frame, repeat, nil); err != nil {
			t.Fatal(err)
		}
	}
	r, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	f := r.Flows[0]
	want := uint64(100 + runs*repeat)
	t.Logf("%d packets sent, %d estimated (sampled %v), N %d now", want, f.Packets, f.Sampled, r.SampleRate)
	within(t, "packets (estimate)", f.Packets, want, 0.10, 0)
	// The variance the meter reports bounds the error: four standard
	// deviations.
	sd := math.Sqrt(float64(r.EstimateVariance))
	if d := math.Abs(float64(f.Packets) - float64(want)); sd == 0 || d > 4*sd {
		t.Errorf("estimate off by %.0f packets, standard deviation %.0f", d, sd)
	} else {
		t.Logf("estimate off by %.0f packets, standard deviation %.0f", d, sd)
	}
	if f.Bytes != f.Packets*uint64(len(frame)) {
		t.Errorf("bytes %d for %d packets of %d", f.Bytes, f.Packets, len(frame))
	}
	if !f.Sampled || r.SampleRate < 2 || r.Budget != budget {
		t.Errorf("over the budget: sampled %v, 1 in %d, budget %d", f.Sampled, r.SampleRate, r.Budget)
	}
	// The CPU counted about budget packets a second after its first
	// window: far fewer than it saw. (The totals stop at the start of
	// the current window.)
	if r.SeenPackets > want || r.SeenPackets < want/2 || r.CountedPackets*10 > r.SeenPackets {
		t.Errorf("the CPUs saw %d packets and counted %d, want about %d seen and a tenth counted at most", r.SeenPackets, r.CountedPackets, want)
	}
}

// Without a budget every packet counts, however fast they come.
func TestNoBudgetCountsEveryPacket(t *testing.T) {
	needRoot(t)
	m, err := openEBPF(Options{Budget: -1}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.slaves[1] = &attachment{ifindex: 1, name: "lo"}
	frame := udpFrames(1)[0]
	const repeat = 2_000_000
	if _, _, err := m.objs.MeterEgress.Benchmark(frame, repeat, nil); err != nil {
		t.Fatal(err)
	}
	r, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Flows) != 1 || r.Flows[0].Packets != repeat || r.Flows[0].Sampled || r.SampleRate != 1 {
		t.Errorf("no budget: %+v, 1 in %d", r.Flows, r.SampleRate)
	}
}
