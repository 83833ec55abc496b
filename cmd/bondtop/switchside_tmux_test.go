package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDemoSwitchSideInTmux: the real binary's --demo shows the switch
// behind each slave, and Enter shows its TLVs and counters.
func TestDemoSwitchSideInTmux(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	p := newPane(t, 160, 48, fmt.Sprintf("%s --demo bond0; sleep 60", bin))
	screen := p.waitText("leaf-a Ethernet1/1", 15*time.Second)
	for _, want := range []string{"SWITCH", "leaf-b Ethernet1/2"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	// The LACP panel lists each slave's partner beside its switch port,
	// under the findings; the demo runs on the wall clock, so during its
	// incidents the findings push those rows down: scroll to them.
	p.keys("Tab")
	for range 8 {
		if screen = p.screen(); strings.Contains(screen, "│ leaf-a Ethernet1/") {
			break
		}
		p.keys("PgDn")
	}
	if !strings.Contains(screen, "│ leaf-a Ethernet1/") {
		t.Errorf("the LACP panel lacks the switch ports:\n%s", screen)
	}
	p.keys("BTab")
	p.keys("Enter")
	screen = p.waitText("switch (LLDP/CDP)", 5*time.Second)
	for _, want := range []string{"Arista Networks EOS", "max frame size", "LACPDU rx / tx", "carrier up / down"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the details lack %q:\n%s", want, screen)
		}
	}
	p.keys("q")
}
