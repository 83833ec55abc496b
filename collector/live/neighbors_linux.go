package live

import (
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/mdlayher/ethtool"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

var _ collector.NeighborReader = (*Source)(nil)

// Watch implements collector.NeighborReader: packet sockets on the slaves,
// opened in the namespace the source watches (the sampler's thread may sit in
// another one).
func (s *Source) Watch(slaves []string) error {
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

// Neighbor implements collector.NeighborReader.
func (s *Source) Neighbor(slave string, now time.Time, into *neighbors.Neighbor) bool {
	return s.nb.CopyNeighbor(slave, now, into)
}

// LACPDUAge implements collector.NeighborReader.
func (s *Source) LACPDUAge(slave string, now time.Time) (time.Duration, bool) {
	return s.nb.LACPDUAge(slave, now)
}

var _ collector.PortCounterReader = (*Source)(nil)

// CarrierCounts implements collector.PortCounterReader from the link dump of
// the last Read: no request. Each link's counts are decoded once, with the
// memo of its message (a change of the counts changes the message, which is
// then decoded anew), so that a steady tick hands out the same counts.
func (s *Source) CarrierCounts(slaves []string, into map[string]*bonding.CarrierCounts) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	for _, sl := range s.slavesBuf {
		m := sl.memo
		name := sl.link.Attrs().Name
		if m == nil || !slices.Contains(slaves, name) {
			continue
		}
		if !m.carrierOK {
			_, m.carrier, _ = bonding.ParseCarrierCounts(m.msg)
			m.carrierOK = true
		}
		into[name] = m.carrier
	}
}

// LACPDUCounters implements collector.PortCounterReader: one RTM_GETSTATS
// dump of every link's slave statistics, of which only the asked slaves' are
// read (the kernel answers only for slaves of 802.3ad bonds). A dump costs
// about what one request for a single slave costs, so a 4-slave bond's
// counters come at a quarter of the price.
func (s *Source) LACPDUCounters(slaves []string, into map[string]bonding.LACPDUCounters) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	wanted := s.statsWanted[:0]
	for _, sl := range s.slavesBuf {
		a := sl.link.Attrs()
		if slices.Contains(slaves, a.Name) {
			wanted = append(wanted, statsWant{slaveRef: slaveRef{index: a.Index, name: a.Name}})
		}
	}
	s.statsWanted = wanted
	s.lacpduStats(wanted, into)
}

// statsWant is a slave whose LACPDU counters are asked for, and whether
// the statistics dump answered for it.
type statsWant struct {
	slaveRef
	answered bool
}

// lacpduStats puts the LACPDU counters of the wanted slaves into out:
// from one statistics dump, and for the slaves the dump did not answer
// for (it failed, or a slave came in the middle of it), one request each.
func (s *Source) lacpduStats(wanted []statsWant, out map[string]bonding.LACPDUCounters) {
	if len(wanted) == 0 {
		return
	}
	set := func(w *statsWant, msg []byte) {
		w.answered = true
		if c, ok := bonding.ParseLACPDUStats(msg); ok {
			out[w.name] = *c
		}
	}
	if !s.noStatsDump {
		var req [bonding.SizeofIfStatsMsg]byte
		binary.NativeEndian.PutUint32(req[8:], bonding.StatsFilterSlaveXstats)
		err := s.rtnl.dump(unix.RTM_GETSTATS, req[:], unix.RTM_NEWSTATS, func(msg []byte) {
			if len(msg) < bonding.SizeofIfStatsMsg {
				return
			}
			idx := int(binary.NativeEndian.Uint32(msg[4:8]))
			for i := range wanted {
				if wanted[i].index == idx && !wanted[i].answered {
					set(&wanted[i], msg)
				}
			}
		})
		// A kernel without the dump (before 4.7 there is no RTM_GETSTATS
		// at all) is not asked again; an interrupted dump's answers hold.
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
			s.noStatsDump = true
		}
	}
	for i := range wanted {
		if w := &wanted[i]; !w.answered {
			var req [bonding.SizeofIfStatsMsg]byte
			binary.NativeEndian.PutUint32(req[4:], uint32(w.index))
			binary.NativeEndian.PutUint32(req[8:], bonding.StatsFilterSlaveXstats)
			_ = s.rtnl.get(unix.RTM_GETSTATS, req[:], unix.RTM_NEWSTATS, func(msg []byte) { set(w, msg) })
		}
	}
}

// HeardLACPDU implements collector.NeighborReader.
func (s *Source) HeardLACPDU(slave string, into *neighbors.LACPDU) bool {
	return s.nb.CopyLACPDU(slave, into)
}

var _ collector.FirmwareLLDPReader = (*Source)(nil)

// FirmwareLLDP implements collector.FirmwareLLDPReader from the driver's
// private flags over ethtool netlink: i40e's "disable-fw-lldp" off, or ice's
// "fw-lldp-agent" on, means the NIC's firmware runs its own LLDP agent, which
// consumes the switch's frames before the host sees them.
func (s *Source) FirmwareLLDP(slave string) (agent, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.eth == nil {
		return false, false
	}
	pf, err := s.eth.PrivateFlags(ethtool.Interface{Name: slave})
	if err != nil {
		return false, false
	}
	return bonding.FirmwareLLDPAgent(pf.Flags)
}
