package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

func TestGoldenFlows(t *testing.T) {
	h, _ := demoHost(t, 40)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		s := demoSim(t, h, size[0], size[1], false)
		s.press("f")
		s.goldenPanel(fmt.Sprintf("demo-flows-%dx%d", size[0], size[1]))
	}
}

func TestFlowsSortAndFilter(t *testing.T) {
	h, _ := demoHost(t, 40)
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
