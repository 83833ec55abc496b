package metrics

import (
	"github.com/bondtop/bondtop/model"
)

// This file owns the bond settings an alert or a dashboard compares with
// the bond's state (link monitor, delays, min_links, MTU, primary), and
// bondtop's count of the slaves that can carry traffic. Times are in
// seconds, as Prometheus names them; a setting the source did not give is
// not served.

var (
	descMIIMon = newDesc(namespace+"_bond_miimon_seconds",
		"The MII link monitor's interval (miimon); 0 when it is off.", gauge, bondLabels...)
	descARPInterval = newDesc(namespace+"_bond_arp_interval_seconds",
		"The ARP monitor's interval (arp_interval); 0 when it is off.", gauge, bondLabels...)
	descUpDelay = newDesc(namespace+"_bond_updelay_seconds",
		"How long a slave's link must be up before the bond uses it (updelay).", gauge, bondLabels...)
	descDownDelay = newDesc(namespace+"_bond_downdelay_seconds",
		"How long a slave's link must be down before the bond stops using it (downdelay).", gauge, bondLabels...)
	descMinLinks = newDesc(namespace+"_bond_min_links",
		"The slaves the bond needs to be up (min_links); 0 is no minimum.", gauge, bondLabels...)
	descBondMTU = newDesc(namespace+"_bond_mtu_bytes",
		"The bond device's MTU.", gauge, bondLabels...)
	descBondOperUp = newDesc(namespace+"_bond_oper_up",
		"1 when the bond device's operstate is up.", gauge, bondLabels...)
	descBondSettings = newDesc(namespace+"_bond_settings_info",
		"A bond's failover settings as labels; always 1.", gauge, "bond", "primary", "primary_reselect", "fail_over_mac")
	descBondSlavesUsable = newDesc(namespace+"_bond_slaves_usable",
		"Slaves that can carry traffic: MII up and, in 802.3ad, in the active aggregator (when the aggregator is known).", gauge, bondLabels...)
	descSlaveMTU = newDesc(namespace+"_slave_mtu_bytes",
		"The slave's MTU.", gauge, slaveLabels...)
	descSlaveOperUp = newDesc(namespace+"_slave_oper_up",
		"1 when the slave's operstate is up.", gauge, slaveLabels...)
)

// collectSettings emits the bond's settings and its usable slaves.
func collectSettings(out batch, b *model.BondSample) {
	for _, s := range []struct {
		d  *desc
		ms *int
	}{{descMIIMon, b.MIIMonMs}, {descARPInterval, b.ARPIntervalMs}, {descUpDelay, b.UpDelayMs}, {descDownDelay, b.DownDelayMs}} {
		if s.ms != nil {
			out.Add(s.d, float64(*s.ms)/1000, b.Name)
		}
	}
	if b.LACP != nil && b.LACP.MinLinks != nil {
		out.Add(descMinLinks, float64(*b.LACP.MinLinks), b.Name)
	}
	if b.MTU != nil {
		out.Add(descBondMTU, float64(*b.MTU), b.Name)
	}
	if b.OperState != nil {
		out.Add(descBondOperUp, boolValue(*b.OperState == "up"), b.Name)
	}
	out.Add(descBondSettings, 1, b.Name, str(b.Primary), str(b.PrimaryReselect), str(b.FailOverMAC))
	out.Add(descBondSlavesUsable, float64(usableSlaves(b)), b.Name)
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if s.MTU != nil {
			out.Add(descSlaveMTU, float64(*s.MTU), b.Name, s.Name)
		}
		if s.OperState != nil {
			out.Add(descSlaveOperUp, boolValue(*s.OperState == "up"), b.Name, s.Name)
		}
	}
}

// usableSlaves counts the slaves with link that the bond can send on: in
// 802.3ad only those of the active aggregator, when the source told which
// it is (a slave whose aggregator is unknown is given the benefit of the
// doubt: it has link).
func usableSlaves(b *model.BondSample) int {
	n := 0
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if str(s.MIIStatus) != "up" {
			continue
		}
		if l := b.LACP; l != nil {
			if l.NoActiveAggregator {
				continue
			}
			if l.AggregatorID != nil && s.AggregatorID != nil && *s.AggregatorID != *l.AggregatorID {
				continue
			}
		}
		n++
	}
	return n
}
