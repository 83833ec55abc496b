package demo

import (
	"math"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
)

var _ collector.PhysicalReader = (*Source)(nil)

// demoOptics are the SFP+ 10GBASE-SR modules in bond0's slaves: light
// levels well inside the modules' limits, so the demo's physical block
// has something to show without a fault of its own. bond1's 1G slaves
// are copper RJ45 ports: no module, no FEC, only the link state.
var demoOptics = map[string]struct {
	serial       string
	rxDBm, txDBm float64
}{
	"ens1f0": {"FNS21480A1K", -2.4, -2.2},
	"ens1f1": {"FNS21480A2P", -3.1, -2.5},
	"ens2f0": {"FNS21480B7C", -2.8, -2.4},
	"ens2f1": {"FNS21480B9D", -4.0, -2.6},
}

// Physical implements collector.PhysicalReader: the link as the script
// has it; for bond0's slaves an optic whose temperature and light drift
// slowly with the wall clock.
func (d *Source) Physical(slave string) (*model.Physical, bool) {
	d.mu.Lock()
	var up, known bool
	for _, sb := range d.bonds {
		for _, n := range sb.slaves {
			if n == slave {
				up, known = !sb.linkDown[n], true
			}
		}
	}
	since, at := d.sinceWeek(), d.last
	d.mu.Unlock()
	if !known {
		return nil, false
	}
	p := &model.Physical{LinkState: &bonding.LinkState{Detected: &up}, ReadAt: at}
	o, ok := demoOptics[slave]
	if !ok {
		return p, false
	}
	p.FEC = &bonding.FEC{Configured: []string{"Off"}, Active: "Off"}
	wobble := math.Sin(float64(since)/float64(7*time.Minute) + o.rxDBm)
	temp, volts := 38.5+2*wobble, 3.29
	lane := module.Lane{Lane: 1, TxBiasMA: new(6.2 + 0.1*wobble)}
	rx, tx := math.Pow(10, (o.rxDBm+0.1*wobble)/10), math.Pow(10, o.txDBm/10)
	lane.RxPowerMW, lane.RxPowerDBm = &rx, new(10*math.Log10(rx))
	lane.TxPowerMW, lane.TxPowerDBm = &tx, new(10*math.Log10(tx))
	p.Module = &module.Module{Type: "SFP", Identifier: 0x03, Vendor: "FINISAR CORP.", PartNumber: "FTLX8574D3BCL",
		Revision: "A", Serial: o.serial, TemperatureC: &temp, SupplyVoltageV: &volts, RxPowerType: "average",
		Lanes: []module.Lane{lane},
		Thresholds: &module.Thresholds{
			TemperatureC:   &module.Limits{HighAlarm: 78, LowAlarm: -13, HighWarning: 73, LowWarning: -8},
			SupplyVoltageV: &module.Limits{HighAlarm: 3.7, LowAlarm: 2.9, HighWarning: 3.6, LowWarning: 3.0},
			TxBiasMA:       &module.Limits{HighAlarm: 13.2, LowAlarm: 4, HighWarning: 12.6, LowWarning: 5},
			TxPowerMW:      &module.Limits{HighAlarm: 1.0, LowAlarm: 0.0933, HighWarning: 0.7943, LowWarning: 0.1862},
			RxPowerMW:      &module.Limits{HighAlarm: 1.0, LowAlarm: 0.0234, HighWarning: 0.7943, LowWarning: 0.0468},
		}}
	return p, false
}
