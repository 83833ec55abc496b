package metrics

import (
	"strconv"

	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/collector"
	"github.com/prometheus/client_golang/prometheus"
)

// The slaves' physical layer (ethtool): the transceiver's light levels
// and temperature, the module's own limits, FEC counters and the link
// state. A value the driver does not report has no series.
var (
	descModuleRxPower = prometheus.NewDesc(namespace+"_slave_module_rx_power_dbm",
		"Receive optical power of the slave's transceiver per lane, dBm (no series for a lane receiving no light at all: see _mw).",
		[]string{"bond", "slave", "lane"}, nil)
	descModuleRxPowerMW = prometheus.NewDesc(namespace+"_slave_module_rx_power_mw",
		"Receive optical power of the slave's transceiver per lane, milliwatts.",
		[]string{"bond", "slave", "lane"}, nil)
	descModuleTxPower = prometheus.NewDesc(namespace+"_slave_module_tx_power_dbm",
		"Transmit optical power of the slave's transceiver per lane, dBm.",
		[]string{"bond", "slave", "lane"}, nil)
	descModuleTxBias = prometheus.NewDesc(namespace+"_slave_module_tx_bias_milliamperes",
		"Laser bias current of the slave's transceiver per lane, mA.",
		[]string{"bond", "slave", "lane"}, nil)
	descModuleRxLimit = prometheus.NewDesc(namespace+"_slave_module_rx_power_threshold_dbm",
		"The transceiver's own receive power limits, dBm (level low_alarm, low_warning, high_warning, high_alarm).",
		[]string{"bond", "slave", "level"}, nil)
	descModuleTemp = prometheus.NewDesc(namespace+"_slave_module_temperature_celsius",
		"Temperature of the slave's transceiver.", slaveLabels, nil)
	descModuleVolts = prometheus.NewDesc(namespace+"_slave_module_supply_voltage_volts",
		"Supply voltage of the slave's transceiver.", slaveLabels, nil)
	descModuleInfo = prometheus.NewDesc(namespace+"_slave_module_info",
		"The slave's transceiver as its EEPROM names it, as labels; always 1.",
		[]string{"bond", "slave", "type", "vendor", "part_number", "serial"}, nil)
	descFECErrors = prometheus.NewDesc(namespace+"_slave_fec_errors_total",
		"FEC blocks the slave's NIC corrected or could not correct (kind corrected, uncorrectable).",
		[]string{"bond", "slave", "kind"}, nil)
	descLinkDetected = prometheus.NewDesc(namespace+"_slave_link_detected",
		"1 when ethtool reports the slave's link detected, 0 when not.", slaveLabels, nil)
)

func collectPhysical(ch chan<- prometheus.Metric, b *collector.BondSample, s *collector.SlaveSample) {
	if s.Physical == nil {
		return
	}
	if ls := s.LinkState; ls != nil && ls.Detected != nil {
		v := 0.0
		if *ls.Detected {
			v = 1
		}
		ch <- gauge(descLinkDetected, v, b.Name, s.Name)
	}
	if f := s.FEC; f != nil {
		if f.Corrected != nil {
			ch <- counter(descFECErrors, float64(*f.Corrected), b.Name, s.Name, "corrected")
		}
		if f.Uncorrectable != nil {
			ch <- counter(descFECErrors, float64(*f.Uncorrectable), b.Name, s.Name, "uncorrectable")
		}
	}
	m := s.Module
	if m == nil {
		return
	}
	ch <- gauge(descModuleInfo, 1, b.Name, s.Name, m.Type, m.Vendor, m.PartNumber, m.Serial)
	if m.TemperatureC != nil {
		ch <- gauge(descModuleTemp, *m.TemperatureC, b.Name, s.Name)
	}
	if m.SupplyVoltageV != nil {
		ch <- gauge(descModuleVolts, *m.SupplyVoltageV, b.Name, s.Name)
	}
	for _, l := range m.Lanes {
		lane := strconv.Itoa(l.Lane)
		if l.RxPowerDBm != nil {
			ch <- gauge(descModuleRxPower, *l.RxPowerDBm, b.Name, s.Name, lane)
		}
		if l.RxPowerMW != nil {
			ch <- gauge(descModuleRxPowerMW, *l.RxPowerMW, b.Name, s.Name, lane)
		}
		if l.TxPowerDBm != nil {
			ch <- gauge(descModuleTxPower, *l.TxPowerDBm, b.Name, s.Name, lane)
		}
		if l.TxBiasMA != nil {
			ch <- gauge(descModuleTxBias, *l.TxBiasMA, b.Name, s.Name, lane)
		}
	}
	if t := m.Thresholds; t != nil && t.RxPowerMW != nil {
		for _, lv := range []struct {
			level string
			mw    float64
		}{{"low_alarm", t.RxPowerMW.LowAlarm}, {"low_warning", t.RxPowerMW.LowWarning}, {"high_warning", t.RxPowerMW.HighWarning}, {"high_alarm", t.RxPowerMW.HighAlarm}} {
			if d, ok := module.DBm(lv.mw); ok {
				ch <- gauge(descModuleRxLimit, d, b.Name, s.Name, lv.level)
			}
		}
	}
}
