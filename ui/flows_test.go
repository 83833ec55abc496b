package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/model"
	"github.com/gdamore/tcell/v2"
)

// The socket view: the demo without its meter.
func TestGoldenFlows(t *testing.T) {
	h, _ := demoHostWith(t, 40, false)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		s := demoSim(t, h, size[0], size[1], false)
		s.press("f")
		s.goldenPanel(fmt.Sprintf("demo-flows-%dx%d", size[0], size[1]))
	}
}

func TestFlowsSortAndFilter(t *testing.T) {
	h, _ := demoHostWith(t, 40, false)
	s := demoSim(t, h, 160, 48, false)
	s.press("f")
	mustContain(t, s.text(), "sort tx (s)")
	s.press("s")
	mustContain(t, s.text(), "sort rx (s)")
	s.press("s")
	mustContain(t, s.text(), "sort slave (s)")
	// → filters to the first slave: every row names it.
	s.key(tcell.KeyRight, 0)
	mustContain(t, s.text(), "slave ens1f0 (← →)")
	b := s.d.model.Selected()
	for _, f := range s.d.sortedFlows(b.Flows) {
		if f.Choice.Slave != "ens1f0" {
			t.Fatalf("filter ens1f0 lists a flow on %q", f.Choice.Slave)
		}
	}
	s.key(tcell.KeyLeft, 0)
	mustContain(t, s.text(), "slave all slaves")
	s.key(tcell.KeyLeft, 0)
	mustContain(t, s.text(), "slave ens2f1 (← →)")
}

// Without a flow table (--root, --replay) the view says why in words.
func TestFlowsWithoutTable(t *testing.T) {
	h := failoverHost(t)
	s := newSim(t, h, 100, 30, false)
	s.press("f")
	screen := s.text()
	mustContain(t, screen, "bond0: no flow table")
	mustContain(t, screen, "a --root tree or a --replay recording holds counters")
	s.press("d")
	if !strings.Contains(s.text(), "no flow table") {
		t.Fatalf("the diagnosis should say the what-if needs a flow table:\n%s", s.text())
	}
}

// The measured view: every flow the demo's simulated meter counts, the
// VMs' forwarded traffic included.
func TestGoldenMeasuredFlows(t *testing.T) {
	h, _ := demoHost(t, 40)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		s := demoSim(t, h, size[0], size[1], false)
		s.press("f")
		s.goldenPanel(fmt.Sprintf("demo-traffic-%dx%d", size[0], size[1]))
	}
}

func TestMeasuredFlowsSortAndFilter(t *testing.T) {
	h, _ := demoHost(t, 40)
	s := demoSim(t, h, 160, 48, false)
	s.press("f")
	screen := s.text()
	mustContain(t, screen, "sort rate (s)")
	mustContain(t, screen, "hash check: ")
	mustContain(t, screen, "fwd")   // a VM's flow
	mustContain(t, screen, "local") // a socket of the host
	b := s.d.model.Selected()
	// Ranked by rate, highest first.
	flows := s.d.measuredFlows(b.Measured)
	for i := 1; i < len(flows); i++ {
		if flows[i].Bps > flows[i-1].Bps {
			t.Fatalf("row %d (%v bit/s) above row %d (%v)", i-1, flows[i-1].Bps, i, flows[i].Bps)
		}
	}
	// t: tx only, then rx only.
	s.press("t")
	mustContain(t, s.text(), "tx (t)")
	for _, f := range s.d.measuredFlows(b.Measured) {
		if !f.IsTx() {
			t.Fatalf("tx filter lists an rx flow %+v", f.Key)
		}
	}
	s.press("t")
	// → ens1f0 only.
	s.key(tcell.KeyRight, 0)
	mustContain(t, s.text(), "slave ens1f0 (← →)  rx (t)")
	got := s.d.measuredFlows(b.Measured)
	if len(got) == 0 {
		t.Fatal("no rx flow on ens1f0")
	}
	for _, f := range got {
		if f.Slave != "ens1f0" || f.IsTx() {
			t.Fatalf("filter ens1f0 rx lists %s %s", f.Slave, f.Direction)
		}
	}
	s.press("s")
	mustContain(t, s.text(), "sort bytes (s)")
}

// A slave's details list its top talkers; the diagnosis shows the hash
// check; the status line the meter's map fill.
func TestMeasuredDetailsAndStatus(t *testing.T) {
	h, _ := demoHost(t, 40)
	s := demoSim(t, h, 160, 48, false)
	mustContain(t, s.text(), "meter ebpf ")
	s.key(tcell.KeyEnter, 0)
	// The talkers follow the switch's side in the details: page down to
	// them as a user would.
	screen := s.text()
	for i := 0; i < 5 && !strings.Contains(screen, "top talkers"); i++ {
		s.key(tcell.KeyPgDn, 0)
		screen = s.text()
	}
	mustContain(t, screen, "top talkers")
	mustContain(t, screen, "tx tcp")
	s.key(tcell.KeyEscape, 0)
	s.press("d")
	mustContain(t, s.text(), "hash check: ")
	mustContain(t, s.text(), "the switch hashes by sourc")
}

// BenchmarkMeasuredFlowsView100k is one redraw at 160x48 with the flows
// view open over 100k measured flows (the view filters them and draws
// the busiest 500 rows).
func BenchmarkMeasuredFlowsView100k(b *testing.B) {
	t := &testing.T{}
	h, _ := demoHost(t, 3)
	s := demoSim(t, h, 160, 48, false)
	bs := s.d.model.Selected()
	big := *bs.Measured
	big.Flows = make([]model.MeasuredFlow, 100_000)
	for i := range big.Flows {
		f := bs.Measured.Flows[i%len(bs.Measured.Flows)]
		fl := *f.Flow
		fl.SrcPort = uint16(i)
		f.Flow = &fl
		f.Bps = float64(len(big.Flows) - i)
		big.Flows[i] = f
	}
	bs.Measured = &big
	s.press("f")
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		s.draw()
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// A sampled meter's figures are estimates, and say so wherever they show.
func TestMeasuredSampledLabels(t *testing.T) {
	h, _ := demoHost(t, 5)
	s := demoSim(t, h, 160, 48, false)
	bs := s.d.model.Selected()
	sampled := *bs.Measured
	sampled.Source, sampled.SampleRate = "sampled", 100
	bs.Measured = &sampled
	s.draw()
	mustContain(t, s.text(), "meter 1:100 ")
	s.press("f")
	mustContain(t, s.text(), "sampled 1:100 (estimates)")
}

// TestFlowRowsFollowTheirInputs: the flow table's rows are built once a
// reading while nothing they show changes, and built again for a new
// reading, a filter, an order or a width.
func TestFlowRowsFollowTheirInputs(t *testing.T) {
	h, _ := demoHost(t, 40)
	s := demoSim(t, h, 160, 48, false)
	s.press("f")
	built := s.d.flowRows.out
	if len(built) < 3 {
		t.Fatalf("%d flow rows after opening the view", len(built))
	}
	s.draw()
	if &s.d.flowRows.out[0] != &built[0] {
		t.Fatal("a frame of the same reading built the rows again")
	}
	s.press("t") // tx only
	for _, row := range s.d.flowRows.out[1:] {
		if len(row) > 1 && !strings.HasPrefix(row[1].text, "tx ") {
			t.Fatalf("with tx only, a row reads %q", row[1].text)
		}
	}
	mustContain(t, s.text(), "tx (t)")
	before := s.d.flowRows.out
	s.screen.SetSize(120, 48)
	s.draw()
	if &s.d.flowRows.out[0] == &before[0] {
		t.Fatal("a narrower screen kept the rows of the wider one")
	}
	before = s.d.flowRows.out
	h.sample(time.Second)
	s.d.apply(h.snaps[len(h.snaps)-1:])
	s.draw()
	if s.d.flowRows.m != s.d.model.Selected().Measured || &s.d.flowRows.out[0] == &before[0] {
		t.Fatal("a new reading kept the rows of the last one")
	}
}

// TestMeasuredFlowsSayTheirPace: below a second's pace, where the
// dashboard reads the meter once a second (collector.DashboardMeterEvery),
// the flows view says so; at a second's pace it says nothing.
func TestMeasuredFlowsSayTheirPace(t *testing.T) {
	h, _ := demoHost(t, 40)
	s := demoSim(t, h, 160, 48, false)
	s.press("f")
	if strings.Contains(s.text(), "read each second") {
		t.Fatal("at 1 s the flows view says it is read each second")
	}
	h.sampler.SetInterval(100 * time.Millisecond)
	for range 15 {
		h.sample(100 * time.Millisecond)
	}
	s.d.apply(h.snaps[len(h.snaps)-1:])
	s.draw()
	mustContain(t, s.text(), "(read each second)")
}

func TestMeterPaceHint(t *testing.T) {
	for _, c := range []struct {
		seconds float64
		pace    time.Duration
		want    string
	}{
		{0, 100 * time.Millisecond, ""},                        // first reading: no span yet
		{0.1, 100 * time.Millisecond, ""},                      // read every tick
		{1, time.Second, ""},                                   // read every tick at 1 s
		{1.02, 100 * time.Millisecond, "  (read each second)"}, // the dashboard below 1 s
		{2.1, 500 * time.Millisecond, "  (read every 2 s)"},    // a late read
		{1.2, time.Second, ""},                                 // a tick that ran late
	} {
		if got := meterPaceHint(c.seconds, c.pace); got != c.want {
			t.Errorf("meterPaceHint(%v, %v) = %q, want %q", c.seconds, c.pace, got, c.want)
		}
	}
}
