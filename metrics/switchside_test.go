package metrics

import (
	"testing"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/bondtop/bondtop/model"
)

func TestSwitchSideMetrics(t *testing.T) {
	name, descr := "leaf-a", "Ethernet1/1 \"uplink\""
	age := 0.5
	snap := &model.Snapshot{Bonds: []model.BondSample{{Bond: bonding.Bond{Name: "bond0"}, Slaves: []model.SlaveSample{
		{Slave: bonding.Slave{Name: "eth0"}, SwitchSide: &model.SwitchSide{
			Neighbor: &neighbors.Neighbor{Protocol: "lldp", ChassisID: "02:aa:00:00:00:01", SystemName: &name, PortID: "Ethernet1/1", PortDescription: &descr},
			LACPDU:   &model.LACPDUSample{LACPDUCounters: bonding.LACPDUCounters{Rx: 7, Tx: 9, IllegalRx: 2}, LastRxAgeSeconds: &age},
			Carrier:  &bonding.CarrierCounts{Up: 3, Down: 2},
		}},
		{Slave: bonding.Slave{Name: "eth1"}}, // a source that does not listen
	}}}}
	e := New()
	e.Update(snap)
	fams := scrape(t, e)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"bondtop_slave_lacpdu_total", map[string]string{"slave": "eth0", "kind": "rx"}, 7},
		{"bondtop_slave_lacpdu_total", map[string]string{"slave": "eth0", "kind": "tx"}, 9},
		{"bondtop_slave_lacpdu_total", map[string]string{"slave": "eth0", "kind": "illegal_rx"}, 2},
		{"bondtop_slave_lacpdu_last_rx_age_seconds", map[string]string{"slave": "eth0"}, 0.5},
		{"bondtop_slave_carrier_changes_total", map[string]string{"slave": "eth0", "direction": "down"}, 2},
		{"bondtop_slave_neighbor_info", map[string]string{"slave": "eth0", "system_name": "leaf-a", "port_id": "Ethernet1/1", "port_description": descr}, 1},
	} {
		if got := find(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, m := range fams["bondtop_slave_lacpdu_total"].Metric {
		for _, l := range m.Label {
			if l.GetName() == "slave" && l.GetValue() == "eth1" {
				t.Error("eth1 has no counters, yet a LACPDU metric")
			}
		}
	}
}
