package metrics

import (
	"github.com/bondtop/bondtop/model"
)

// The flow meter's metrics: the live hash check, the bytes counted in no
// flow, and the flow map's fill. No per-flow series: flows come and go by
// the thousand, and a series per flow would swamp the server.

var (
	descTrafficFlows = newDesc(namespace+"_traffic_flows",
		"Flows the flow meter holds for the bond's slaves (both directions); source is ebpf or sampled.", gauge, "bond", "source")
	descHashCheckFlows = newDesc(namespace+"_hash_check_flows",
		"Transmitted flows that moved in the last interval (the hash check's base).", gauge, bondLabels...)
	descHashCheckAgree = newDesc(namespace+"_hash_check_agree_flows",
		"Of those, flows measured on the slave the transmit hash predicts.", gauge, bondLabels...)
	descHashCheckUnpredictable = newDesc(namespace+"_hash_check_unpredictable_flows",
		"Of those, flows whose slave the hash cannot predict (the mode or policy decides unseen).", gauge, bondLabels...)
	descHashCheckBytes = newDesc(namespace+"_hash_check_bytes_agree_ratio",
		"The part (0..1) of the predictable flows' bytes that left on the predicted slave.", gauge, bondLabels...)
	descLostBytes = newDesc(namespace+"_traffic_lost_bytes_total",
		"Bytes the flow meter counted in no flow because its flow map was full.", counter, "bond", "slave", "direction")
	descMapEntries = newDesc(namespace+"_flow_map_entries",
		"Flows in the flow meter's map (shared by every bond).", gauge)
	descMapSize = newDesc(namespace+"_flow_map_size",
		"Capacity of the flow meter's map (--flow-map-size).", gauge)
)

// collectTraffic emits the meter's metrics of every bond, and the map's
// fill once.
func collectTraffic(out batch, snap *model.Snapshot) {
	mapDone := false
	for i := range snap.Bonds {
		b := &snap.Bonds[i]
		m := b.Measured
		if !m.Metered() {
			continue
		}
		if !mapDone && m.MapSize > 0 {
			out.Add(descMapEntries, float64(m.MapEntries))
			out.Add(descMapSize, float64(m.MapSize))
			mapDone = true
		}
		out.Add(descTrafficFlows, float64(len(m.Flows)), b.Name, m.Source)
		a := m.Agreement
		out.Add(descHashCheckFlows, float64(a.Flows), b.Name)
		out.Add(descHashCheckAgree, float64(a.Agree), b.Name)
		out.Add(descHashCheckUnpredictable, float64(a.Unpredictable), b.Name)
		if a.BytesAgreeShare != nil {
			out.Add(descHashCheckBytes, *a.BytesAgreeShare, b.Name)
		}
		for j := range m.Slaves {
			s := &m.Slaves[j]
			out.Add(descLostBytes, float64(s.LostTxBytes), b.Name, s.Slave, "tx")
			out.Add(descLostBytes, float64(s.LostRxBytes), b.Name, s.Slave, "rx")
		}
	}
}
