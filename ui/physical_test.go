package ui

import (
	"strings"
	"testing"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/model"
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
	if st, ok := s.styleAt("-2.4 dBm 0.5"); !ok || st != *s.d.th.good {
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

// TestPhysicalDetailsRows: a QSFP28 with a dark lane on a slave whose
// link is down for a reason the driver gives, and FEC that lost blocks;
// a slave with only a link state gets only that row.
func TestPhysicalDetailsRows(t *testing.T) {
	th := newTheme(false)
	down, dark, weak, ok, tx, bias, unc := false, 0.0, 0.04, 0.5, 0.6, 7.0, uint64(12)
	limits := &module.Limits{HighAlarm: 2, LowAlarm: 0.03, HighWarning: 1.5, LowWarning: 0.06}
	s := &model.SlaveSample{Physical: &model.Physical{
		LinkState: &bonding.LinkState{Detected: &down, ExtState: "no_cable"},
		FEC:       &bonding.FEC{Configured: []string{"Auto", "RS"}, Uncorrectable: &unc},
		Module: &module.Module{Type: "QSFP28", Vendor: "ACME", Lanes: []module.Lane{
			{Lane: 1, RxPowerMW: &ok, TxPowerMW: &tx, TxBiasMA: &bias}, {Lane: 2, RxPowerMW: &weak}, {Lane: 3, RxPowerMW: &dark}},
			Thresholds: &module.Thresholds{RxPowerMW: limits}},
	}}
	rows := map[string]line{}
	for _, l := range physicalDetails(th, s) {
		var b strings.Builder
		for _, sp := range l {
			b.WriteString(sp.text)
		}
		rows[strings.Fields(b.String() + " -")[0]+" "+strings.Fields(b.String() + " - -")[1]] = l
	}
	want := map[string]string{
		"link detected": "no (no cable)",
		"FEC active":    "-",
		"FEC blocks":    "uncorrectable 12",
		"module QSFP28": "ACME",
		"lane 1":        "rx -3.0 dBm 0.500 mW  tx -2.2 dBm  bias 7.0 mA",
		"lane 2":        "rx -14.0 dBm 0.040 mW",
		"lane 3":        "rx -inf dBm 0.000 mW",
		"rx limits":     "warn -12.2 dBm .. 1.8 dBm, alarm -15.2 dBm .. 3.0 dBm",
	}
	for k, v := range want {
		l, found := rows[k]
		if !found {
			t.Errorf("no %q row (rows %v)", k, len(rows))
			continue
		}
		var b strings.Builder
		for _, sp := range l {
			b.WriteString(sp.text)
		}
		if !strings.Contains(b.String(), v) {
			t.Errorf("%s row %q lacks %q", k, b.String(), v)
		}
	}
	// Lane 2 and 3 below the warning: their rx drawn bad; lane 1 good.
	for lane, style := range map[string]tcell.Style{"lane 1": *th.good, "lane 2": *th.bad, "lane 3": *th.bad} {
		if l := rows[lane]; len(l) < 3 || *l[2].style != style {
			t.Errorf("%s rx style wrong", lane)
		}
	}
	if st := rows["link detected"][1].style; st != th.bad {
		t.Error("a down link not drawn bad")
	}

	up := true
	only := physicalDetails(th, &model.SlaveSample{Physical: &model.Physical{LinkState: &bonding.LinkState{Detected: &up}}})
	if len(only) != 3 { // blank, heading, link detected
		t.Errorf("a veth's block has %d rows, want 3", len(only))
	}
	if physicalDetails(th, &model.SlaveSample{}) != nil {
		t.Error("a slave without physical data gets a block")
	}
}
