package ui

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

func TestSwitchSideOnScreen(t *testing.T) {
	h, _ := demoHost(t, 5)
	s := demoSim(t, h, 160, 48, false)
	text := s.text()
	mustContain(t, text, "SWITCH")
	mustContain(t, text, "leaf-a Ethernet1/1")
	mustContain(t, text, "│ leaf-b Ethernet1/2") // beside ens2f1's LACP partner
	if st, ok := s.styleAt("leaf-a Ethernet1/1"); !ok || st == *s.d.th.bad {
		t.Errorf("a healthy neighbour drawn as trouble (%v)", ok)
	}

	// Details of the first slave: every TLV, the counters.
	s.key(tcell.KeyEnter, 0)
	text = s.text()
	for _, want := range []string{"switch (LLDP/CDP)", "02:1c:73:aa:00:0a", "Arista Networks EOS", "capable true, enabled true, port 1000", "9216", "10 servers", "LACPDU rx / tx", "carrier up / down"} {
		mustContain(t, text, want)
	}
	s.key(tcell.KeyEscape, 0)

	// bond1's access switch takes standard frames under MTU 9000: marked.
	s.press("]")
	text = s.text()
	mustContain(t, text, "access-3 Gi1/0/17")
	if st, ok := s.styleAt("access-3 Gi1/0/18"); !ok || st != *s.d.th.bad { // eno2: not under the cursor
		t.Error("the access switch's too-small frames are not marked")
	}
	mustContain(t, text, "eno2 switch port access-3 Gi1/0/18: max frame 1522 < MTU 9000")
	s.press("d")
	if text = s.text(); !strings.Contains(text, "switch-frame-size") {
		t.Errorf("the diagnosis lacks the frame size finding:\n%s", text)
	}
}

// TestNoSwitchColumnWithoutListening: a source that does not listen (a
// --root tree) shows no SWITCH column at all.
func TestNoSwitchColumnWithoutListening(t *testing.T) {
	h := lacpHost(t, "synthetic-8023ad-6.8-4slaves-root.txt", []string{"e1", "e2"})
	s := newSim(t, h, 160, 48, false)
	mustNotContain(t, s.text(), "SWITCH")
	mustNotContain(t, s.text(), "no LLDP")
}
