package metrics

import (
	"strconv"

	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/internal/promtext"
)

// The slaves' physical layer (ethtool): the transceiver's light levels
// and temperature, the module's own limits, FEC counters and the link
// state. A value the driver does not report has no series.
var (
	descModuleRxPower = promtext.NewDesc(namespace+"_slave_module_rx_power_dbm",
		"Receive optical power of the slave's transceiver per lane, dBm (no series for a lane receiving no light at all: see _mw).",
		promtext.Gauge, "bond", "slave", "lane")
	descModuleRxPowerMW = promtext.NewDesc(namespace+"_slave_module_rx_power_mw",
		"Receive optical power of the slave's transceiver per lane, milliwatts.",
		promtext.Gauge, "bond", "slave", "lane")
	descModuleTxPower = promtext.NewDesc(namespace+"_slave_module_tx_power_dbm",
		"Transmit optical power of the slave's transceiver per lane, dBm.",
		promtext.Gauge, "bond", "slave", "lane")
	descModuleTxBias = promtext.NewDesc(namespace+"_slave_module_tx_bias_milliamperes",
		"Laser bias current of the slave's transceiver per lane, mA.",
		promtext.Gauge, "bond", "slave", "lane")
	descModuleRxLimit = promtext.NewDesc(namespace+"_slave_module_rx_power_threshold_dbm",
		"The transceiver's own receive power limits, dBm (level low_alarm, low_warning, high_warning, high_alarm).",
		promtext.Gauge, "bond", "slave", "level")
	descModuleTemp = promtext.NewDesc(namespace+"_slave_module_temperature_celsius",
		"Temperature of the slave's transceiver.", promtext.Gauge, slaveLabels...)
	descModuleVolts = promtext.NewDesc(namespace+"_slave_module_supply_voltage_volts",
		"Supply voltage of the slave's transceiver.", promtext.Gauge, slaveLabels...)
	descModuleInfo = promtext.NewDesc(namespace+"_slave_module_info",
		"The slave's transceiver as its EEPROM names it, as labels; always 1.",
		promtext.Gauge, "bond", "slave", "type", "vendor", "part_number", "serial")
	descFECErrors = promtext.NewDesc(namespace+"_slave_fec_errors_total",
		"FEC blocks the slave's NIC corrected or could not correct (kind corrected, uncorrectable).",
		promtext.Counter, "bond", "slave", "kind")
	descLinkDetected = promtext.NewDesc(namespace+"_slave_link_detected",
		"1 when ethtool reports the slave's link detected, 0 when not.", promtext.Gauge, slaveLabels...)
)

func collectPhysical(out *promtext.Scrape, b *collector.BondSample, s *collector.SlaveSample) {
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
			out.Add(descModuleRxPowerMW, *l.RxPowerMW, b.Name, s.Name, lane)
		}
		if l.TxPowerDBm != nil {
			out.Add(descModuleTxPower, *l.TxPowerDBm, b.Name, s.Name, lane)
		}
		if l.TxBiasMA != nil {
			out.Add(descModuleTxBias, *l.TxBiasMA, b.Name, s.Name, lane)
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
