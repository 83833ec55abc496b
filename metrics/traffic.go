package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bondtop/bondtop/collector"
)

// The flow meter's metrics: the live hash check, the bytes counted in no
// flow, and the flow map's fill. No per-flow series: flows come and go by
// the thousand, and a series per flow would swamp the server.

var (
	descTrafficFlows = prometheus.NewDesc(namespace+"_traffic_flows",
		"Flows the flow meter holds for the bond's slaves (both directions); source is ebpf or sampled.", []string{"bond", "source"}, nil)
	descHashCheckFlows = prometheus.NewDesc(namespace+"_hash_check_flows",
		"Transmitted flows that moved in the last interval (the hash check's base).", bondLabels, nil)
	descHashCheckAgree = prometheus.NewDesc(namespace+"_hash_check_agree_flows",
		"Of those, flows measured on the slave the transmit hash predicts.", bondLabels, nil)
	descHashCheckUnpredictable = prometheus.NewDesc(namespace+"_hash_check_unpredictable_flows",
		"Of those, flows whose slave the hash cannot predict (the mode or policy decides unseen).", bondLabels, nil)
	descHashCheckBytes = prometheus.NewDesc(namespace+"_hash_check_bytes_agree_ratio",
		"The part (0..1) of the predictable flows' bytes that left on the predicted slave.", bondLabels, nil)
	descLostBytes = prometheus.NewDesc(namespace+"_traffic_lost_bytes_total",
		"Bytes the flow meter counted in no flow because its flow map was full.", []string{"bond", "slave", "direction"}, nil)
	descMapEntries = prometheus.NewDesc(namespace+"_flow_map_entries",
		"Flows in the flow meter's map (shared by every bond).", nil, nil)
	descMapSize = prometheus.NewDesc(namespace+"_flow_map_size",
		"Capacity of the flow meter's map (--flow-map-size).", nil, nil)
)

// collectTraffic emits the meter's metrics of every bond, and the map's
// fill once.
func collectTraffic(ch chan<- prometheus.Metric, snap *collector.Snapshot) {
	mapDone := false
	for i := range snap.Bonds {
		b := &snap.Bonds[i]
		m := b.Measured
		if !m.Metered() {
			continue
		}
		if !mapDone && m.MapSize > 0 {
			ch <- gauge(descMapEntries, float64(m.MapEntries))
			ch <- gauge(descMapSize, float64(m.MapSize))
			mapDone = true
		}
		ch <- gauge(descTrafficFlows, float64(len(m.Flows)), b.Name, m.Source)
		a := m.Agreement
		ch <- gauge(descHashCheckFlows, float64(a.Flows), b.Name)
		ch <- gauge(descHashCheckAgree, float64(a.Agree), b.Name)
		ch <- gauge(descHashCheckUnpredictable, float64(a.Unpredictable), b.Name)
		if a.BytesAgreeShare != nil {
			ch <- gauge(descHashCheckBytes, *a.BytesAgreeShare, b.Name)
		}
		for j := range m.Slaves {
			s := &m.Slaves[j]
			ch <- counter(descLostBytes, float64(s.LostTxBytes), b.Name, s.Slave, "tx")
			ch <- counter(descLostBytes, float64(s.LostRxBytes), b.Name, s.Slave, "rx")
		}
	}
}
