package ui

import (
	"testing"

	"github.com/gdamore/tcell/v2"
)

// TestPhysicalDetailsOnScreen: the demo's bond0 slaves carry SFP+ optics;
// a slave's details show the physical block with the module, its light
// levels against its limits, and FEC. bond1's copper ports show the link
// state and no module rows.
func TestPhysicalDetailsOnScreen(t *testing.T) {
	h, _ := demoHost(t, 5)
	s := demoSim(t, h, 160, 90, false)
	s.key(tcell.KeyEnter, 0)
	text := s.text()
	for _, want := range []string{"physical (ethtool)", "link detected", "FEC active", "SFP FINISAR CORP. FTLX8574D3BCL rev A  s/n FNS21480A1K",
		"temperature", "°C  warn 73 / alarm 78 °C", "supply voltage        3.29 V", "light", "rx -2.4 dBm 0.5", "  tx -2.2 dBm  bias 6.", "rx limits             warn -13.3 dBm .. -1.0 dBm, alarm -16.3 dBm .. 0.0 dBm"} {
		mustContain(t, text, want)
	}
	if st, ok := s.styleAt("-2.4 dBm 0.5"); !ok || st != s.d.th.good {
		t.Errorf("healthy rx power not drawn as good (%v)", ok)
	}
	s.key(tcell.KeyEscape, 0)
	s.press("]")
	s.key(tcell.KeyEnter, 0)
	text = s.text()
	mustContain(t, text, "physical (ethtool)")
	mustContain(t, text, "link detected")
	mustNotContain(t, text, "FEC active")
	mustNotContain(t, text, "rx limits")
}
