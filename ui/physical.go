package ui

import (
	"fmt"
	"strings"

	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/model"
)

// physicalDetails are the details' rows for a slave's physical layer
// (ethtool): link state, FEC, the transceiver and its light levels
// against the module's own limits. Nothing the driver does not report
// gets a row; a slave with nothing at all gets no block.
func physicalDetails(th *theme, s *model.SlaveSample) []line {
	p := s.Physical
	if p == nil {
		return nil
	}
	out := []line{nil, {{"physical (ethtool)", th.heading}}}
	kv := func(k string, v ...span) {
		out = append(out, append(line{{padRight(k, 22), th.dim}}, v...))
	}
	if ls := p.LinkState; ls != nil && ls.Detected != nil {
		if *ls.Detected {
			kv("link detected", span{"yes", th.good})
		} else {
			why := ""
			if ls.ExtState != "" {
				why = " (" + diagnose.LinkDownReason(ls.ExtState, ls.ExtSubstate) + ")"
			}
			kv("link detected", span{"no" + why, th.bad})
		}
		if ls.DownEvents != nil {
			kv("link down events", span{fmt.Sprint(*ls.DownEvents), th.base})
		}
	}
	if f := p.FEC; f != nil {
		active := f.Active
		if active == "" {
			active = "-"
		}
		kv("FEC active", span{active, th.base}, span{"  configured " + strings.Join(f.Configured, " "), th.dim})
		var counts []string
		if f.Corrected != nil {
			counts = append(counts, fmt.Sprintf("corrected %d", *f.Corrected))
		}
		if f.Uncorrectable != nil {
			counts = append(counts, fmt.Sprintf("uncorrectable %d", *f.Uncorrectable))
		}
		if f.CorrectedBits != nil {
			counts = append(counts, fmt.Sprintf("corrected bits %d", *f.CorrectedBits))
		}
		if len(counts) > 0 {
			style := th.base
			if f.Uncorrectable != nil && *f.Uncorrectable > 0 {
				style = th.warn
			}
			kv("FEC blocks", span{strings.Join(counts, ", "), style})
		}
	}
	if m := p.Module; m != nil {
		moduleRows(th, m, kv)
	}
	return out
}

// moduleRows adds a transceiver's identity and monitors through kv.
func moduleRows(th *theme, m *module.Module, kv func(string, ...span)) {
	id := strings.TrimSpace(strings.Join([]string{m.Type, m.Vendor, m.PartNumber}, " "))
	if m.Revision != "" {
		id += " rev " + m.Revision
	}
	if m.Serial != "" {
		id += "  s/n " + m.Serial
	}
	kv("module", span{id, th.base})
	lim := m.Thresholds
	if t := m.TemperatureC; t != nil {
		style, note := th.base, ""
		if lim != nil && lim.TemperatureC != nil {
			l := lim.TemperatureC
			note = fmt.Sprintf("  warn %.0f / alarm %.0f °C", l.HighWarning, l.HighAlarm)
			if *t > l.HighWarning || *t < l.LowWarning {
				style = th.bad
			}
		}
		kv("temperature", span{fmt.Sprintf("%.1f °C", *t), style}, span{note, th.dim})
	}
	if v := m.SupplyVoltageV; v != nil {
		kv("supply voltage", span{fmt.Sprintf("%.2f V", *v), th.base})
	}
	for _, l := range m.Lanes {
		name := "light"
		if len(m.Lanes) > 1 {
			name = fmt.Sprintf("lane %d", l.Lane)
		}
		var row []span
		if l.RxPowerMW != nil {
			style := th.good
			if lim != nil && lim.RxPowerMW != nil && (*l.RxPowerMW < lim.RxPowerMW.LowWarning || (lim.RxPowerMW.HighWarning > 0 && *l.RxPowerMW > lim.RxPowerMW.HighWarning)) {
				style = th.bad
			}
			row = append(row, span{"rx ", th.dim}, span{powerText(*l.RxPowerMW), style})
		}
		if l.TxPowerMW != nil {
			style := th.base
			if lim != nil && lim.TxPowerMW != nil && *l.TxPowerMW < lim.TxPowerMW.LowWarning {
				style = th.bad
			}
			row = append(row, span{"  tx ", th.dim}, span{dbm(*l.TxPowerMW), style})
		}
		if l.TxBiasMA != nil {
			row = append(row, span{"  bias ", th.dim}, span{fmt.Sprintf("%.1f mA", *l.TxBiasMA), th.base})
		}
		if len(row) > 0 {
			kv(name, row...)
		}
	}
	if lim != nil && lim.RxPowerMW != nil {
		l := lim.RxPowerMW
		kv("rx limits", span{fmt.Sprintf("warn %s .. %s, alarm %s .. %s",
			dbm(l.LowWarning), dbm(l.HighWarning), dbm(l.LowAlarm), dbm(l.HighAlarm)), th.dim})
	}
}

// powerText is optical power in dBm with the milliwatts beside it.
func powerText(mw float64) string {
	return fmt.Sprintf("%s %.3f mW", dbm(mw), mw)
}

func dbm(mw float64) string {
	if d, ok := module.DBm(mw); ok {
		return fmt.Sprintf("%.1f dBm", d)
	}
	return "-inf dBm"
}
