package metrics

import (
	"strconv"

	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/model"
)

// The slaves' physical layer (ethtool): the transceiver's light levels
// and temperature, the module's own limits, FEC counters and the link
// state. A value the driver does not report has no series.
var (
	descModuleRxPower = newDesc(namespace+"_slave_module_rx_power_dbm",
		"Receive optical power of the slave's transceiver per lane, dBm (no series for a lane receiving no light at all: see _watts).",
		gauge, "bond", "slave", "lane")
	descModuleRxPowerW = newDesc(namespace+"_slave_module_rx_power_watts",
		"Receive optical power of the slave's transceiver per lane, watts (formerly _rx_power_mw, in milliwatts).",
		gauge, "bond", "slave", "lane")
	descModuleTxPower = newDesc(namespace+"_slave_module_tx_power_dbm",
		"Transmit optical power of the slave's transceiver per lane, dBm.",
		gauge, "bond", "slave", "lane")
	descModuleTxBias = newDesc(namespace+"_slave_module_tx_bias_amperes",
		"Laser bias current of the slave's transceiver per lane, amperes (formerly _tx_bias_milliamperes, in mA).",
		gauge, "bond", "slave", "lane")
	descModuleRxLimit = newDesc(namespace+"_slave_module_rx_power_threshold_dbm",
		"The transceiver's own receive power limits, dBm (level low_alarm, low_warning, high_warning, high_alarm).",
		gauge, "bond", "slave", "level")
	descModuleTemp = newDesc(namespace+"_slave_module_temperature_celsius",
		"Temperature of the slave's transceiver.", gauge, slaveLabels...)
	descModuleVolts = newDesc(namespace+"_slave_module_supply_voltage_volts",
		"Supply voltage of the slave's transceiver.", gauge, slaveLabels...)
	descModuleInfo = newDesc(namespace+"_slave_module_info",
		"The slave's transceiver as its EEPROM names it, as labels; always 1.",
		gauge, "bond", "slave", "type", "vendor", "part_number", "serial")
	descFECErrors = newDesc(namespace+"_slave_fec_errors_total",
		"FEC blocks the slave's NIC corrected or could not correct (kind corrected, uncorrectable).",
		counter, "bond", "slave", "kind")
	descLinkDetected = newDesc(namespace+"_slave_link_detected",
		"1 when ethtool reports the slave's link detected, 0 when not.", gauge, slaveLabels...)
)

func collectPhysical(out batch, b *model.BondSample, s *model.SlaveSample) {
	if s.Physical == nil {
		return
	}
	if ls := s.LinkState; ls != nil && ls.Detected != nil {
		v := 0.0
		if *ls.Detected {
			v = 1
		}
		out.Add(descLinkDetected, v, b.Name, s.Name)
	}
	if f := s.FEC; f != nil {
		if f.Corrected != nil {
			out.Add(descFECErrors, float64(*f.Corrected), b.Name, s.Name, "corrected")
		}
		if f.Uncorrectable != nil {
			out.Add(descFECErrors, float64(*f.Uncorrectable), b.Name, s.Name, "uncorrectable")
		}
	}
	m := s.Module
	if m == nil {
		return
	}
	out.Add(descModuleInfo, 1, b.Name, s.Name, m.Type, m.Vendor, m.PartNumber, m.Serial)
	if m.TemperatureC != nil {
		out.Add(descModuleTemp, *m.TemperatureC, b.Name, s.Name)
	}
	if m.SupplyVoltageV != nil {
		out.Add(descModuleVolts, *m.SupplyVoltageV, b.Name, s.Name)
	}
	for _, l := range m.Lanes {
		lane := strconv.Itoa(l.Lane)
		if l.RxPowerDBm != nil {
			out.Add(descModuleRxPower, *l.RxPowerDBm, b.Name, s.Name, lane)
		}
		if l.RxPowerMW != nil {
			out.Add(descModuleRxPowerW, *l.RxPowerMW/1000, b.Name, s.Name, lane)
		}
		if l.TxPowerDBm != nil {
			out.Add(descModuleTxPower, *l.TxPowerDBm, b.Name, s.Name, lane)
		}
		if l.TxBiasMA != nil {
			out.Add(descModuleTxBias, *l.TxBiasMA/1000, b.Name, s.Name, lane)
		}
	}
	if t := m.Thresholds; t != nil && t.RxPowerMW != nil {
		for _, lv := range []struct {
			level string
			mw    float64
		}{{"low_alarm", t.RxPowerMW.LowAlarm}, {"low_warning", t.RxPowerMW.LowWarning}, {"high_warning", t.RxPowerMW.HighWarning}, {"high_alarm", t.RxPowerMW.HighAlarm}} {
			if d, ok := module.DBm(lv.mw); ok {
				out.Add(descModuleRxLimit, d, b.Name, s.Name, lv.level)
			}
		}
	}
}
