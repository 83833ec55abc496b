package ui

import "github.com/bondtop/bondtop/bonding"

// ovsHeaderMode names an Open vSwitch bond in the header the way
// ovs-vsctl configures it: "ovs balance-tcp lacp active bridge br-ex".
func ovsHeaderMode(b *bonding.Bond, th *theme) line {
	l := line{{"ovs ", th.dim}, {orDash(b.Mode), th.base}}
	if b.OVS != nil && b.OVS.LACP != "" && b.OVS.LACP != "off" {
		l = l.add(" lacp ", th.dim).add(b.OVS.LACP, th.base)
	}
	if b.Bridge != nil {
		l = l.add(" bridge ", th.dim).add(*b.Bridge, th.base)
	}
	return l
}
