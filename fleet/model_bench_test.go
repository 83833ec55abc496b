package fleet

import (
	"fmt"
	"testing"
)

// BenchmarkAssemble10000 builds the list of 10 000 bonds (2 500 hosts × 4
// bonds × 2 slaves) from answers as Prometheus gives them: the bondtop
// side of a refresh (decoding the JSON is not in it).
func BenchmarkAssemble10000(b *testing.B) {
	var up, gauges, rates []Series
	for h := range 2500 {
		inst := fmt.Sprintf("host%d:9843", h)
		up = append(up, Series{Labels: map[string]string{"__name__": "up", "instance": inst, "job": "bondtop"}, Value: 1})
		for bi := range 4 {
			bond := fmt.Sprintf("bond%d", bi)
			m := func(name string, extra ...string) map[string]string {
				mm := map[string]string{"__name__": name, "instance": inst, "job": "bondtop", "bond": bond}
				for i := 0; i+1 < len(extra); i += 2 {
					mm[extra[i]] = extra[i+1]
				}
				return mm
			}
			gauges = append(gauges,
				Series{Labels: m("bondtop_bond_info", "mode", "802.3ad", "xmit_hash_policy", "layer3+4"), Value: 1},
				Series{Labels: m("bondtop_bond_up"), Value: 1},
				Series{Labels: m("bondtop_bond_slaves"), Value: 2},
				Series{Labels: m("bondtop_bond_slaves_up"), Value: 2},
			)
			if (h+bi)%50 == 0 {
				gauges = append(gauges, Series{Labels: m("bondtop_finding", "id", "lacp-no-partner", "severity", "warning", "slave", "eth1"), Value: 1})
			}
			for _, tag := range []string{"bond_tx", "bond_rx"} {
				mm := m("")
				delete(mm, "__name__")
				mm[tagLabel] = tag
				rates = append(rates, Series{Labels: mm, Value: float64(h * bi)})
			}
			for si := range 2 {
				slave := fmt.Sprintf("eth%d", si)
				gauges = append(gauges,
					Series{Labels: m("bondtop_slave_up", "slave", slave), Value: 1},
					Series{Labels: m("bondtop_slave_active", "slave", slave), Value: 1},
					Series{Labels: m("bondtop_slave_speed_bytes", "slave", slave), Value: 1.25e9},
				)
				for _, tag := range []string{"slave_tx", "slave_rx"} {
					mm := m("", "slave", slave)
					delete(mm, "__name__")
					mm[tagLabel] = tag
					rates = append(rates, Series{Labels: mm, Value: 1})
				}
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		f := Assemble(up, gauges, nil, rates)
		if len(f.Bonds) != 10000 {
			b.Fatalf("%d bonds", len(f.Bonds))
		}
	}
}
