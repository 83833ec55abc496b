package diagnose

import (
	"strings"
	"testing"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/model"
)

// optic gives a slave an SFP whose one lane receives rxMW and sends txMW,
// at tempC, with limits like a 10GBASE-SR module's: rx low alarm -16 dBm,
// low warning -12 dBm, high warning -1 dBm, high alarm 0 dBm; tx low
// warning -8 dBm; temperature warning 70, alarm 75 °C.
func optic(s model.SlaveSample, rxMW, txMW, tempC float64) model.SlaveSample {
	m := &module.Module{Type: "SFP", TemperatureC: &tempC,
		Lanes: []module.Lane{{Lane: 1, RxPowerMW: &rxMW, TxPowerMW: &txMW}},
		Thresholds: &module.Thresholds{
			RxPowerMW:    &module.Limits{HighAlarm: 1, LowAlarm: 0.0251, HighWarning: 0.7943, LowWarning: 0.0631},
			TxPowerMW:    &module.Limits{HighAlarm: 1, LowAlarm: 0.1, HighWarning: 0.7943, LowWarning: 0.1585},
			TemperatureC: &module.Limits{HighAlarm: 75, LowAlarm: -5, HighWarning: 70, LowWarning: 0},
		}}
	s.Physical = &model.Physical{Module: m}
	return s
}

func withFEC(s model.SlaveSample, corrected, uncorrectable uint64) model.SlaveSample {
	p := model.Physical{}
	if s.Physical != nil {
		p = *s.Physical
	}
	p.FEC = &bonding.FEC{Configured: []string{"RS"}, Active: "RS", Corrected: &corrected, Uncorrectable: &uncorrectable}
	s.Physical = &p
	return s
}

func TestModuleRxPower(t *testing.T) {
	good := lacpBond(optic(lacpSlave("eth0", 1), 0.5, 0.5, 40), optic(lacpSlave("eth1", 2), 0.4, 0.5, 40))
	expect(t, "healthy optics", analyzeOne(good), IDModuleRxPower, false)

	weak := lacpBond(optic(lacpSlave("eth0", 1), 0.5, 0.5, 40), optic(lacpSlave("eth1", 2), 0.038, 0.5, 40))
	fs := analyzeOne(weak)
	expect(t, "rx -14.2 dBm", fs, IDModuleRxPower, true, "eth1")
	for _, f := range fs {
		if f.ID == IDModuleRxPower {
			if want := "eth1: rx power -14.2 dBm below the module's warning -12.0 dBm: dirty or failing optic, or the far end's laser"; f.Message != want {
				t.Errorf("message %q, want %q", f.Message, want)
			}
			if f.Severity != Warning {
				t.Errorf("severity %s, want warning", f.Severity)
			}
		}
	}
	dark := lacpBond(optic(lacpSlave("eth0", 1), 0, 0.5, 40), optic(lacpSlave("eth1", 2), 0.5, 0.5, 40))
	fs = analyzeOne(dark)
	expect(t, "no light", fs, IDModuleRxPower, true, "eth0")
	if f := findingByID(fs, IDModuleRxPower); f.Severity != Critical || !strings.Contains(f.Message, "no light (0 mW) below the module's alarm -16.0 dBm") {
		t.Errorf("no light: %+v", f)
	}
	hot := lacpBond(optic(lacpSlave("eth0", 1), 1.2, 0.05, 72))
	fs = analyzeOne(hot)
	expect(t, "overloaded receiver", fs, IDModuleRxPower, true, "eth0")
	expect(t, "weak laser", fs, IDModuleTxPower, true, "eth0")
	expect(t, "hot module", fs, IDModuleTemperature, true, "eth0")
	// No module, or a module without thresholds: nothing to judge.
	bare := lacpBond(lacpSlave("eth0", 1))
	bare.Slaves[0].Physical = &model.Physical{Module: &module.Module{Type: "SFP", Lanes: []module.Lane{{Lane: 1, RxPowerMW: new(0.0)}}}}
	expect(t, "no thresholds", analyzeOne(bare), IDModuleRxPower, false)
}

func findingByID(fs []Finding, id string) Finding {
	for _, f := range fs {
		if f.ID == id {
			return f
		}
	}
	return Finding{}
}

func TestFECRising(t *testing.T) {
	before := lacpBond(withFEC(lacpSlave("eth0", 1), 100, 0), withFEC(lacpSlave("eth1", 2), 100, 0))
	after := lacpBond(withFEC(lacpSlave("eth0", 1), 100, 3), withFEC(lacpSlave("eth1", 2), 5100, 0))
	fs := analyzeOne(before, after)
	expect(t, "uncorrectable +3", fs, IDFECUncorrectable, true, "eth0")
	expect(t, "corrected +5000", fs, IDFECCorrected, true, "eth1")
	if f := findingByID(fs, IDFECUncorrectable); !strings.Contains(f.Message, "eth0 3") {
		t.Errorf("message %q", f.Message)
	}
	expect(t, "steady FEC", analyzeOne(before, before), IDFECUncorrectable, false)
	expect(t, "steady FEC", analyzeOne(before, before), IDFECCorrected, false)
	// A driver without counters: nothing.
	noStats := lacpBond(lacpSlave("eth0", 1))
	noStats.Slaves[0].Physical = &model.Physical{FEC: &bonding.FEC{Configured: []string{"Off"}}}
	expect(t, "no counters", analyzeOne(noStats, noStats), IDFECUncorrectable, false)
}

func TestLinkDownReason(t *testing.T) {
	b := lacpBond(lacpSlave("eth0", 1), lacpSlave("eth1", 2))
	b.Slaves[1].Physical = &model.Physical{LinkState: &bonding.LinkState{Detected: new(false), ExtState: "autoneg", ExtSubstate: "no_partner_detected"}}
	b.Slaves[0].Physical = &model.Physical{LinkState: &bonding.LinkState{Detected: new(true)}}
	fs := analyzeOne(b)
	expect(t, "autoneg without partner", fs, IDLinkDownReason, true, "eth1")
	if f := findingByID(fs, IDLinkDownReason); !strings.Contains(f.Message, "eth1: autoneg, no partner detected") {
		t.Errorf("message %q", f.Message)
	}
}
