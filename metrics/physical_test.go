package metrics

import (
	"math"
	"testing"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/model"
)

func TestPhysicalMetrics(t *testing.T) {
	temp, rx, dark, tx, corr, unc, bias := 41.5, 0.038, 0.0, 0.5, uint64(1234), uint64(7), 6.5
	rxDBm, txDBm := -14.2, -3.0
	up := true
	snap := &model.Snapshot{Bonds: []model.BondSample{{Bond: bonding.Bond{Name: "bond0"}, Slaves: []model.SlaveSample{
		{Slave: bonding.Slave{Name: "eth0"}, Physical: &model.Physical{
			LinkState: &bonding.LinkState{Detected: &up},
			FEC:       &bonding.FEC{Configured: []string{"RS"}, Active: "RS", Corrected: &corr, Uncorrectable: &unc},
			Module: &module.Module{Type: "QSFP28", Vendor: "ACME", PartNumber: "Q28-SR4", Serial: "S1", TemperatureC: &temp,
				Lanes:      []module.Lane{{Lane: 1, RxPowerMW: &rx, RxPowerDBm: &rxDBm, TxPowerMW: &tx, TxPowerDBm: &txDBm, TxBiasMA: &bias}, {Lane: 2, RxPowerMW: &dark}},
				Thresholds: &module.Thresholds{RxPowerMW: &module.Limits{LowWarning: 0.0631, LowAlarm: 0.0251, HighWarning: 0.7943, HighAlarm: 1}}},
		}},
		{Slave: bonding.Slave{Name: "veth1"}, Physical: &model.Physical{LinkState: &bonding.LinkState{Detected: &up}}},
	}}}}
	e := New()
	e.Update(snap)
	fams := scrape(t, e)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"bondtop_slave_module_rx_power_dbm", map[string]string{"slave": "eth0", "lane": "1"}, -14.2},
		{"bondtop_slave_module_rx_power_watts", map[string]string{"slave": "eth0", "lane": "2"}, 0},
		{"bondtop_slave_module_rx_power_watts", map[string]string{"slave": "eth0", "lane": "1"}, 0.000038},
		{"bondtop_slave_module_tx_bias_amperes", map[string]string{"slave": "eth0", "lane": "1"}, 0.0065},
		{"bondtop_slave_module_tx_power_dbm", map[string]string{"slave": "eth0", "lane": "1"}, -3},
		{"bondtop_slave_module_temperature_celsius", map[string]string{"slave": "eth0"}, 41.5},
		{"bondtop_slave_module_rx_power_threshold_dbm", map[string]string{"slave": "eth0", "level": "low_warning"}, -12.0},
		{"bondtop_slave_module_info", map[string]string{"slave": "eth0", "vendor": "ACME", "part_number": "Q28-SR4", "type": "QSFP28"}, 1},
		{"bondtop_slave_fec_errors_total", map[string]string{"slave": "eth0", "kind": "corrected"}, 1234},
		{"bondtop_slave_fec_errors_total", map[string]string{"slave": "eth0", "kind": "uncorrectable"}, 7},
		{"bondtop_slave_link_detected", map[string]string{"slave": "veth1"}, 1},
	} {
		if got := find(t, fams, c.name, c.labels); math.Abs(got-c.want) > 0.01*math.Max(math.Abs(c.want), 1e-6) {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// No light on lane 2: no dBm series (it would be -Inf), the mW one says 0.
	for _, m := range fams["bondtop_slave_module_rx_power_dbm"].Metric {
		for _, l := range m.Label {
			if l.GetName() == "lane" && l.GetValue() == "2" {
				t.Error("a dBm series for a lane without light")
			}
		}
	}
	// A veth: no module, no FEC series.
	for _, fam := range []string{"bondtop_slave_fec_errors_total", "bondtop_slave_module_info"} {
		for _, m := range fams[fam].Metric {
			for _, l := range m.Label {
				if l.GetName() == "slave" && l.GetValue() == "veth1" {
					t.Errorf("%s for veth1", fam)
				}
			}
		}
	}
}
