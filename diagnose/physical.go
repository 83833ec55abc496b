package diagnose

import (
	"fmt"
	"strings"

	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/model"
)

// Finding IDs of the slaves' physical layer (ethtool: module
// diagnostics, FEC, the driver's link-down reason).
const (
	IDModuleRxPower     = "module-rx-power"
	IDModuleTxPower     = "module-tx-power"
	IDModuleTemperature = "module-temperature"
	IDFECUncorrectable  = "fec-uncorrectable"
	IDFECCorrected      = "fec-corrected"
	IDLinkDownReason    = "link-down-reason"
)

// physical: what the slaves' optics and PHYs say against their own
// limits, and FEC counters that rose in the window.
func (v *view) physical() []Finding {
	var out []Finding
	for _, f := range []func() []Finding{v.moduleLight, v.moduleTemperature, v.fecRising, v.linkDownReason} {
		out = append(out, f()...)
	}
	return out
}

// fecMark is a slave's FEC counters at a sample of the window (the
// first one's, against now, say what rose).
type fecMark struct {
	corrected, uncorrectable optUint
}

func fecMarkOf(s *model.SlaveSample) fecMark {
	var m fecMark
	if s.Physical == nil || s.FEC == nil {
		return m
	}
	if c := s.FEC.Corrected; c != nil {
		m.corrected = optUint{*c, true}
	}
	if u := s.FEC.Uncorrectable; u != nil {
		m.uncorrectable = optUint{*u, true}
	}
	return m
}

func moduleOf(s *model.SlaveSample) *module.Module {
	if s.Physical == nil {
		return nil
	}
	return s.Module
}

func dbmText(mw float64) string {
	if d, ok := module.DBm(mw); ok {
		return fmt.Sprintf("%.1f dBm", d)
	}
	return "no light (0 mW)"
}

// lanePrefix names a lane only on multi-lane modules.
func lanePrefix(m *module.Module, l module.Lane) string {
	if len(m.Lanes) > 1 {
		return fmt.Sprintf(" lane %d", l.Lane)
	}
	return ""
}

// powerBreach compares one lane's power with the module's limits: "" when
// within them, else the words, and whether an alarm (not a warning)
// limit is crossed.
func powerBreach(mw float64, lim *module.Limits, low bool) (what string, alarm bool) {
	if lim == nil {
		return "", false
	}
	if low {
		switch {
		case mw < lim.LowAlarm:
			return fmt.Sprintf("%s below the module's alarm %s", dbmText(mw), dbmText(lim.LowAlarm)), true
		case mw < lim.LowWarning:
			return fmt.Sprintf("%s below the module's warning %s", dbmText(mw), dbmText(lim.LowWarning)), false
		}
		return "", false
	}
	switch {
	case lim.HighAlarm > 0 && mw > lim.HighAlarm:
		return fmt.Sprintf("%s above the module's alarm %s", dbmText(mw), dbmText(lim.HighAlarm)), true
	case lim.HighWarning > 0 && mw > lim.HighWarning:
		return fmt.Sprintf("%s above the module's warning %s", dbmText(mw), dbmText(lim.HighWarning)), false
	}
	return "", false
}

// moduleLight: receive power outside the module's own limits (too little:
// dirty connector, bad fibre, failing far-end laser; too much: a short
// single-mode link without attenuator), and transmit power below them
// (our own laser failing).
func (v *view) moduleLight() []Finding {
	var rxParts, txParts []string
	rxSlaves, txSlaves := map[string]bool{}, map[string]bool{}
	rxAlarm, txAlarm, rxLow := false, false, false
	for i := range v.now.Slaves {
		s := &v.now.Slaves[i]
		m := moduleOf(s)
		if m == nil || m.Thresholds == nil {
			continue
		}
		for _, l := range m.Lanes {
			if l.RxPowerMW != nil {
				what, alarm := powerBreach(*l.RxPowerMW, m.Thresholds.RxPowerMW, true)
				if what != "" {
					rxLow = true
				} else {
					what, alarm = powerBreach(*l.RxPowerMW, m.Thresholds.RxPowerMW, false)
				}
				if what != "" {
					rxParts = append(rxParts, s.Name+lanePrefix(m, l)+": rx power "+what)
					rxSlaves[s.Name], rxAlarm = true, rxAlarm || alarm
				}
			}
			if l.TxPowerMW != nil {
				if what, alarm := powerBreach(*l.TxPowerMW, m.Thresholds.TxPowerMW, true); what != "" {
					txParts = append(txParts, s.Name+lanePrefix(m, l)+": tx power "+what)
					txSlaves[s.Name], txAlarm = true, txAlarm || alarm
				}
			}
		}
	}
	var out []Finding
	if len(rxParts) > 0 {
		sev := Warning
		if rxAlarm {
			sev = Critical
		}
		detail := "The module measures the light arriving from the far end below the limits its vendor set: a dirty or damaged connector (clean both ends with a fibre cleaner), a bent or broken fibre, a patch panel in the path, or the far end's laser failing (ask for the switch port's tx power: show interfaces transceiver). Errors and flaps follow as the margin goes."
		if !rxLow {
			detail = "The module receives more light than its limits allow: a short single-mode link between long-reach optics overloads the receiver. Add an attenuator, or use optics meant for the distance."
		}
		out = append(out, Finding{ID: IDModuleRxPower, Severity: sev, Slaves: v.slaveOrder(rxSlaves),
			Message: strings.Join(rxParts, "; ") + ": " + map[bool]string{true: "dirty or failing optic, or the far end's laser", false: "the receiver is overloaded"}[rxLow],
			Detail:  detail + " ethtool -m SLAVE shows every lane and the limits."})
	}
	if len(txParts) > 0 {
		sev := Warning
		if txAlarm {
			sev = Critical
		}
		out = append(out, Finding{ID: IDModuleTxPower, Severity: sev, Slaves: v.slaveOrder(txSlaves),
			Message: strings.Join(txParts, "; ") + ": this host's optic is failing",
			Detail:  "The module's own laser sends less light than its limits allow: the transceiver is ageing or failing (or is disabled by the driver). Replace the module; ethtool -m SLAVE shows the tx bias current, which rises as a laser wears out."})
	}
	return out
}

// moduleTemperature: a module hotter than its high warning (airflow,
// a blocked fan, a module in a port that needs better cooling).
func (v *view) moduleTemperature() []Finding {
	var parts []string
	hot := map[string]bool{}
	alarm := false
	for i := range v.now.Slaves {
		s := &v.now.Slaves[i]
		m := moduleOf(s)
		if m == nil || m.TemperatureC == nil || m.Thresholds == nil || m.Thresholds.TemperatureC == nil {
			continue
		}
		t, lim := *m.TemperatureC, m.Thresholds.TemperatureC
		switch {
		case t > lim.HighAlarm:
			parts = append(parts, fmt.Sprintf("%s %.1f °C above the module's alarm %.1f °C", s.Name, t, lim.HighAlarm))
			hot[s.Name], alarm = true, true
		case t > lim.HighWarning:
			parts = append(parts, fmt.Sprintf("%s %.1f °C above the module's warning %.1f °C", s.Name, t, lim.HighWarning))
			hot[s.Name] = true
		}
	}
	if len(parts) == 0 {
		return nil
	}
	sev := Warning
	if alarm {
		sev = Critical
	}
	return []Finding{{ID: IDModuleTemperature, Severity: sev, Slaves: v.slaveOrder(hot),
		Message: "transceiver too hot: " + strings.Join(parts, "; "),
		Detail:  "A module over its temperature limits loses light and then the link. Check the server's airflow and fans, blanking panels, and whether the NIC's port is rated for the module's power class."}}
}

// fecRising: FEC counters that rose over the window. Uncorrectable blocks
// are frames lost; corrected blocks are a link that works through errors.
func (v *view) fecRising() []Finding {
	var unc, cor []string
	uncSlaves, corSlaves := map[string]bool{}, map[string]bool{}
	for i := range v.now.Slaves {
		s := &v.now.Slaves[i]
		p := v.win.firstSlave(s.Name)
		if p == nil || s.Physical == nil || s.FEC == nil {
			continue
		}
		if u := s.FEC.Uncorrectable; u != nil && p.fec.uncorrectable.ok && *u > p.fec.uncorrectable.v {
			unc = append(unc, fmt.Sprintf("%s %d", s.Name, *u-p.fec.uncorrectable.v))
			uncSlaves[s.Name] = true
		}
		if c := s.FEC.Corrected; c != nil && p.fec.corrected.ok && *c > p.fec.corrected.v {
			cor = append(cor, fmt.Sprintf("%s %d", s.Name, *c-p.fec.corrected.v))
			corSlaves[s.Name] = true
		}
	}
	if len(unc)+len(cor) == 0 {
		return nil
	}
	span := fmt.Sprintf("%.0f s", v.win.seconds())
	var out []Finding
	if len(unc) > 0 {
		out = append(out, Finding{ID: IDFECUncorrectable, Severity: Warning, Slaves: v.slaveOrder(uncSlaves),
			Message: "FEC could not correct blocks in the last " + span + " (frames lost): " + strings.Join(unc, ", "),
			Detail:  "Forward error correction repairs bit errors on the link; blocks it cannot repair are dropped frames. The signal is too weak or noisy: clean or replace the optic or cable (ethtool -m SLAVE for light levels), check that both ends use the same FEC mode (ethtool --show-fec SLAVE against the switch's port), and look at the switch port's errors."})
	}
	if len(cor) > 0 {
		out = append(out, Finding{ID: IDFECCorrected, Severity: Info, Slaves: v.slaveOrder(corSlaves),
			Message: "FEC corrected blocks in the last " + span + ": " + strings.Join(cor, ", "),
			Detail:  "Corrected blocks cost nothing yet: FEC repaired every error. A count that climbs steadily, or faster on one slave than its neighbours, is a link losing margin (a dirty connector, an ageing optic): clean it before FEC stops keeping up."})
	}
	return out
}

// linkDownReason: the driver says why a slave's link is down (ethtool's
// extended link state).
func (v *view) linkDownReason() []Finding {
	var parts []string
	down := map[string]bool{}
	for i := range v.now.Slaves {
		s := &v.now.Slaves[i]
		if s.Physical == nil || s.LinkState == nil || s.LinkState.Detected == nil || *s.LinkState.Detected || s.LinkState.ExtState == "" {
			continue
		}
		parts = append(parts, s.Name+": "+LinkDownReason(s.LinkState.ExtState, s.LinkState.ExtSubstate))
		down[s.Name] = true
	}
	if len(parts) == 0 {
		return nil
	}
	return []Finding{{ID: IDLinkDownReason, Severity: Info, Slaves: v.slaveOrder(down),
		Message: "the NIC says why the link is down: " + strings.Join(parts, "; "),
		Detail:  "The driver's extended link state (ethtool SLAVE, \"Link detected: no (...)\"): no cable or module seated, autonegotiation without a partner (the switch port is shut or set to another speed), a FEC or speed mismatch with the switch, or a module the NIC does not accept."}}
}

// LinkDownReason words a driver's extended link state and substate.
func LinkDownReason(state, substate string) string {
	s := strings.ReplaceAll(state, "_", " ")
	if substate != "" {
		s += ", " + strings.ReplaceAll(substate, "_", " ")
	}
	return s
}
