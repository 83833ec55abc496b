package collector

import (
	"encoding/binary"
	"runtime"
	"slices"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/mdlayher/ethtool"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

var _ NeighborReader = (*LiveSource)(nil)

// Watch implements NeighborReader: packet sockets on the slaves, opened
// in the namespace the source watches (the sampler's thread may sit in
// another one).
func (s *LiveSource) Watch(slaves []string) error {
	if !s.ns.IsOpen() || inNetns(s.ns) {
		return s.nb.Watch(slaves)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return err
	}
	defer orig.Close()
	if err := netns.Set(s.ns); err != nil {
		return err
	}
	// Back to where the thread was before it is unlocked, so no other
	// goroutine runs in the watched namespace by accident.
	defer netns.Set(orig)
	return s.nb.Watch(slaves)
}

// Neighbor implements NeighborReader.
func (s *LiveSource) Neighbor(slave string) *neighbors.Neighbor { return s.nb.Neighbor(slave) }

// LACPDUAge implements NeighborReader.
func (s *LiveSource) LACPDUAge(slave string) (time.Duration, bool) { return s.nb.LACPDUAge(slave) }

var _ PortCounterReader = (*LiveSource)(nil)

// PortCounters implements PortCounterReader. The carrier counts come from
// the link dump of the last Read (no extra request); the LACPDU counters
// cost one RTM_GETSTATS request per slave, answered only for slaves of
// 802.3ad bonds.
func (s *LiveSource) PortCounters(slaves []string) map[string]PortCounters {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	out := make(map[string]PortCounters, len(slaves))
	for _, msg := range s.msgs {
		scan, ok := bonding.ScanLink(msg)
		if !ok || !scan.Slave {
			continue
		}
		name, carrier, _ := bonding.ParseCarrierCounts(msg)
		if !slices.Contains(slaves, name) {
			continue
		}
		pc := PortCounters{Carrier: carrier}
		pc.LACPDU = s.lacpduStats(scan.Index)
		out[name] = pc
	}
	return out
}

// lacpduStats asks for one slave's extended statistics; nil when the bond
// runs another mode, the kernel predates them, or the request failed.
func (s *LiveSource) lacpduStats(ifindex int) *bonding.LACPDUCounters {
	req := &nl.NetlinkRequest{
		NlMsghdr: unix.NlMsghdr{Len: unix.SizeofNlMsghdr, Type: unix.RTM_GETSTATS, Flags: unix.NLM_F_REQUEST},
		Sockets:  s.rt,
	}
	hdr := make([]byte, bonding.SizeofIfStatsMsg)
	binary.NativeEndian.PutUint32(hdr[4:], uint32(ifindex))
	binary.NativeEndian.PutUint32(hdr[8:], bonding.StatsFilterSlaveXstats)
	req.AddRawData(hdr)
	var c *bonding.LACPDUCounters
	_ = req.ExecuteIter(unix.NETLINK_ROUTE, unix.RTM_NEWSTATS, func(msg []byte) bool {
		c, _ = bonding.ParseLACPDUStats(msg)
		return true
	})
	return c
}

// HeardLACPDU implements NeighborReader.
func (s *LiveSource) HeardLACPDU(slave string) *neighbors.LACPDU { return s.nb.HeardLACPDU(slave) }

var _ FirmwareLLDPReader = (*LiveSource)(nil)

// FirmwareLLDP implements FirmwareLLDPReader from the driver's private
// flags over ethtool netlink: i40e's "disable-fw-lldp" off, or ice's
// "fw-lldp-agent" on, means the NIC's firmware runs its own LLDP agent,
// which consumes the switch's frames before the host sees them.
func (s *LiveSource) FirmwareLLDP(slave string) (agent, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.eth == nil {
		return false, false
	}
	pf, err := s.eth.PrivateFlags(ethtool.Interface{Name: slave})
	if err != nil {
		return false, false
	}
	return firmwareLLDPAgent(pf.Flags)
}
