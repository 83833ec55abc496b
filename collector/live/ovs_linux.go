package live

import (
	"github.com/vishvananda/netlink"

	"github.com/bondtop/bondtop/bonding"
)

// netlinkMembers reads an OVS member's link by its ifindex (OVSDB's
// Interface.ifindex), by name when OVSDB has none: one RTM_GETLINK each,
// so a host with hundreds of links is not dumped for a bond of two.
type netlinkMembers struct{}

func (netlinkMembers) read(name string, ifindex *int64, s *bonding.Slave) error {
	var l netlink.Link
	var err error
	if ifindex != nil && *ifindex > 0 {
		l, err = netlink.LinkByIndex(int(*ifindex))
		if err == nil && l.Attrs().Name != name {
			l = nil // the index was reused since OVSDB's read
		}
	}
	if l == nil {
		if l, err = netlink.LinkByName(name); err != nil {
			return err
		}
	}
	a := l.Attrs()
	s.Counters = bonding.NetlinkCounters(a)
	s.OperState = bonding.OperState(a.OperState)
	s.MTU = new(a.MTU)
	return nil
}

// ReadOVS makes the source read Open vSwitch bonds too, from the sockets
// under rundir ("" for /var/run/openvswitch, where a host without OVS is
// not worth a warning). Call it before the first Read.
func (s *Source) ReadOVS(rundir string) { s.ovs = newOVSBonds(rundir, s.now) }
