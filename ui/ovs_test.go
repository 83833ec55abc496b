package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

// The demo's Open vSwitch bond. 40 s in both members are up and bucket 37
// (the replication stream) carries most of the bond; 15 s in the switch
// has stopped sending LACPDUs on ens3f1, and OVS disabled it. The header
// names the bond the way ovs-vsctl configures it; the slaves table, LACP
// panel, events and diagnosis are the Linux bond's.
func TestGoldenDemoOVS(t *testing.T) {
	h, _ := demoHost(t, 40)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		s := newSim(t, h, size[0], size[1], false)
		s.press("3")
		if text := s.text(); !strings.Contains(text, "ovs balance-tcp") || !strings.Contains(text, "br-ex") {
			t.Fatalf("%dx%d: the header does not name the OVS bond:\n%s", size[0], size[1], text)
		}
		s.golden(fmt.Sprintf("demo-ovs-%dx%d", size[0], size[1]))
		s.press("d")
		s.goldenPanel(fmt.Sprintf("demo-ovs-diagnosis-%dx%d", size[0], size[1]))
	}
	// The details of ens3f1, the member that has bucket 37.
	s := newSim(t, h, 160, 48, false)
	s.press("3")
	s.key(tcell.KeyDown, 0)
	s.key(tcell.KeyEnter, 0)
	if text := s.text(); !strings.Contains(text, "37: ") || !strings.Contains(text, "current attached") {
		t.Fatalf("details of ens3f1 lack the buckets or LACP status:\n%s", text)
	}
	s.goldenPanel("demo-ovs-details-160x48")
	h, _ = demoHost(t, 15)
	s = newSim(t, h, 160, 48, false)
	s.press("3")
	s.press("d")
	s.goldenPanel("demo-ovs-lacp-partial-160x48")
}
