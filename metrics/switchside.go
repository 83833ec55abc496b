package metrics

import (
	"github.com/bondtop/bondtop/model"
)

// The switch's side of each slave: LACPDU counters, carrier transitions
// and the LLDP/CDP neighbour.
var (
	descSlaveLACPDU = newDesc(namespace+"_slave_lacpdu_total",
		"802.3ad: LACPDUs and markers the bonding driver counted on the slave, by kind (rx, tx, unknown_rx, illegal_rx, marker_rx, marker_tx).",
		counter, "bond", "slave", "kind")
	descSlaveLACPDUAge = newDesc(namespace+"_slave_lacpdu_last_rx_age_seconds",
		"802.3ad: seconds since a LACPDU last arrived on the slave.", gauge, slaveLabels...)
	descSlaveCarrier = newDesc(namespace+"_slave_carrier_changes_total",
		"Carrier transitions of the slave (direction up or down), also those between two MII polls.",
		counter, "bond", "slave", "direction")
	descSlaveNeighbor = newDesc(namespace+"_slave_neighbor_info",
		"The switch port at the far end of the slave as LLDP or CDP tells it, as labels; always 1.",
		gauge, "bond", "slave", "protocol", "chassis_id", "system_name", "port_id", "port_description")
)

func collectSwitchSide(out batch, b *model.BondSample, s *model.SlaveSample) {
	if s.SwitchSide == nil {
		return
	}
	if c := s.LACPDU; c != nil {
		for _, k := range []struct {
			kind string
			v    uint64
		}{{"rx", c.Rx}, {"tx", c.Tx}, {"unknown_rx", c.UnknownRx}, {"illegal_rx", c.IllegalRx}, {"marker_rx", c.MarkerRx}, {"marker_tx", c.MarkerTx}} {
			out.Add(descSlaveLACPDU, float64(k.v), b.Name, s.Name, k.kind)
		}
		if c.LastRxAgeSeconds != nil {
			out.Add(descSlaveLACPDUAge, *c.LastRxAgeSeconds, b.Name, s.Name)
		}
	}
	if c := s.Carrier; c != nil {
		out.Add(descSlaveCarrier, float64(c.Up), b.Name, s.Name, "up")
		out.Add(descSlaveCarrier, float64(c.Down), b.Name, s.Name, "down")
	}
	if n := s.Neighbor; n != nil {
		out.Add(descSlaveNeighbor, 1, b.Name, s.Name, n.Protocol, n.ChassisID, deref(n.SystemName), n.PortID, deref(n.PortDescription))
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
