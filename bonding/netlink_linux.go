package bonding

import (
	"encoding/binary"
	"math"
	"net"

	"github.com/mdlayher/ethtool"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// This file turns what the kernel says over netlink into the model: the
// bond and slave attributes of an RTM_GETLINK dump (decoded by
// vishvananda/netlink, plus what v1.3.1 leaves out) and ethtool link modes.
// The functions are pure; the live source in package collector does the I/O.

// LinkScan is what ScanLink finds in an RTM_NEWLINK message without
// decoding it.
type LinkScan struct {
	Index  int  // ifi_index
	Master int  // IFLA_MASTER; 0 when the link has no master
	Bond   bool // IFLA_INFO_KIND is "bond": a bonding master
	Slave  bool // IFLA_INFO_SLAVE_KIND is "bond": enslaved to a bond
}

// ScanLink reads the index, the master and the bonding role of one
// RTM_NEWLINK message (struct ifinfomsg and its attributes, without the
// netlink header). It allocates nothing, so a live source can skip the
// full decode of the many links of a host that are neither bonds nor
// slaves. ok is false for a message too short to hold an ifinfomsg.
func ScanLink(msg []byte) (scan LinkScan, ok bool) {
	if len(msg) < unix.SizeofIfInfomsg {
		return LinkScan{}, false
	}
	scan.Index = int(int32(binary.NativeEndian.Uint32(msg[4:8])))
	seenInfo := false
	walkAttrs(msg[unix.SizeofIfInfomsg:], func(typ uint16, val []byte) bool {
		switch typ {
		case unix.IFLA_MASTER:
			if len(val) >= 4 {
				scan.Master = int(binary.NativeEndian.Uint32(val))
			}
		case unix.IFLA_LINKINFO:
			// The kernel sends one; like ParseBondAttrs, read the first.
			if seenInfo {
				return true
			}
			seenInfo = true
			walkAttrs(val, func(typ uint16, val []byte) bool {
				switch typ {
				case unix.IFLA_INFO_KIND:
					scan.Bond = isBondKind(val)
				case unix.IFLA_INFO_SLAVE_KIND:
					scan.Slave = isBondKind(val)
				}
				return true
			})
		}
		return true
	})
	return scan, true
}

// isBondKind reports whether a kind attribute says "bond" (NUL-terminated).
func isBondKind(val []byte) bool {
	if n := len(val); n > 0 && val[n-1] == 0 {
		val = val[:n-1]
	}
	return string(val) == "bond"
}

// walkAttrs calls f with the type (flags masked off) and payload of each
// netlink attribute in b, until f returns false or an attribute is
// malformed. It is the allocation-free cousin of nl.ParseRouteAttr.
func walkAttrs(b []byte, f func(typ uint16, val []byte) bool) {
	for len(b) >= unix.SizeofRtAttr {
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		typ := binary.NativeEndian.Uint16(b[2:4]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if l < unix.SizeofRtAttr || l > len(b) {
			return
		}
		if !f(typ, b[unix.SizeofRtAttr:l]) {
			return
		}
		adv := (l + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1)
		if adv >= len(b) {
			return
		}
		b = b[adv:]
	}
}

// BondAttrs is the part of a bond master's IFLA_INFO_DATA that
// vishvananda/netlink v1.3.1 does not give: which IFLA_BOND_* attributes
// the kernel sent at all (its Bond struct cannot tell an absent attribute
// from a zero one, and kernels before 3.14 send only seven of them), and
// the values it does not decode.
type BondAttrs struct {
	present uint64
	// AdInfo is IFLA_BOND_AD_INFO, the active aggregator of an 802.3ad
	// bond; nil when the kernel did not send it (no active aggregator).
	AdInfo *netlink.BondAdInfo
	// PeerNotifDelayMs is IFLA_BOND_PEER_NOTIF_DELAY (5.3+).
	PeerNotifDelayMs *int
	// LACPActive is IFLA_BOND_AD_LACP_ACTIVE (5.15+).
	LACPActive *bool
}

// Has reports whether the kernel sent the IFLA_BOND_* attribute typ.
func (a *BondAttrs) Has(typ uint16) bool {
	return typ < 64 && a.present&(1<<typ) != 0
}

// ParseBondAttrs decodes the bond part of one RTM_NEWLINK message (struct
// ifinfomsg and its attributes). ok is false when the message is not a
// bonding master or carries no IFLA_INFO_DATA (a reader in another
// network namespace, an interrupted dump).
func ParseBondAttrs(msg []byte) (attrs BondAttrs, ok bool) {
	if len(msg) < unix.SizeofIfInfomsg {
		return BondAttrs{}, false
	}
	var data []byte
	bond := false
	walkAttrs(msg[unix.SizeofIfInfomsg:], func(typ uint16, val []byte) bool {
		if typ != unix.IFLA_LINKINFO {
			return true
		}
		walkAttrs(val, func(typ uint16, val []byte) bool {
			switch typ {
			case unix.IFLA_INFO_KIND:
				bond = isBondKind(val)
			case unix.IFLA_INFO_DATA:
				data = val
			}
			return true
		})
		return false
	})
	if !bond || data == nil {
		return BondAttrs{}, false
	}
	walkAttrs(data, func(typ uint16, val []byte) bool {
		if typ < 64 {
			attrs.present |= 1 << typ
		}
		switch typ {
		case unix.IFLA_BOND_AD_INFO:
			attrs.AdInfo = parseAdInfo(val)
		case unix.IFLA_BOND_PEER_NOTIF_DELAY:
			if len(val) >= 4 {
				attrs.PeerNotifDelayMs = new(int(binary.NativeEndian.Uint32(val)))
			}
		case unix.IFLA_BOND_AD_LACP_ACTIVE:
			if len(val) >= 1 {
				attrs.LACPActive = new(val[0] != 0)
			}
		}
		return true
	})
	return attrs, true
}

// parseAdInfo decodes the nested IFLA_BOND_AD_INFO (if_link.h): aggregator
// id, number of ports, actor and partner keys (u16 each), partner MAC.
func parseAdInfo(b []byte) *netlink.BondAdInfo {
	info := &netlink.BondAdInfo{}
	u16 := func(val []byte) int {
		if len(val) < 2 {
			return 0
		}
		return int(binary.NativeEndian.Uint16(val))
	}
	walkAttrs(b, func(typ uint16, val []byte) bool {
		switch typ {
		case unix.IFLA_BOND_AD_INFO_AGGREGATOR:
			info.AggregatorId = u16(val)
		case unix.IFLA_BOND_AD_INFO_NUM_PORTS:
			info.NumPorts = u16(val)
		case unix.IFLA_BOND_AD_INFO_ACTOR_KEY:
			info.ActorKey = u16(val)
		case unix.IFLA_BOND_AD_INFO_PARTNER_KEY:
			info.PartnerKey = u16(val)
		case unix.IFLA_BOND_AD_INFO_PARTNER_MAC:
			if len(val) >= 6 {
				info.PartnerMac = net.HardwareAddr(append([]byte(nil), val[:6]...))
			}
		}
		return true
	})
	return info
}

// modernBondAttrs are the attributes every kernel since 3.14 sends for
// every bond: what FromNetlinkBond assumes when it is given no BondAttrs.
const modernBondAttrs = 1<<unix.IFLA_BOND_MODE | 1<<unix.IFLA_BOND_MIIMON |
	1<<unix.IFLA_BOND_UPDELAY | 1<<unix.IFLA_BOND_DOWNDELAY |
	1<<unix.IFLA_BOND_USE_CARRIER | 1<<unix.IFLA_BOND_ARP_INTERVAL |
	1<<unix.IFLA_BOND_ARP_VALIDATE | 1<<unix.IFLA_BOND_ARP_ALL_TARGETS |
	1<<unix.IFLA_BOND_PRIMARY_RESELECT | 1<<unix.IFLA_BOND_FAIL_OVER_MAC |
	1<<unix.IFLA_BOND_XMIT_HASH_POLICY | 1<<unix.IFLA_BOND_RESEND_IGMP |
	1<<unix.IFLA_BOND_NUM_PEER_NOTIF | 1<<unix.IFLA_BOND_ALL_SLAVES_ACTIVE |
	1<<unix.IFLA_BOND_MIN_LINKS | 1<<unix.IFLA_BOND_LP_INTERVAL |
	1<<unix.IFLA_BOND_PACKETS_PER_SLAVE | 1<<unix.IFLA_BOND_AD_LACP_RATE |
	1<<unix.IFLA_BOND_AD_SELECT

// AuthoritativeActive reports whether the message would have named an
// active slave and a primary had the bond had them (every kernel with bond
// netlink attributes does), so their absence means "none", not "unknown".
func (a *BondAttrs) AuthoritativeActive() bool { return a.Has(unix.IFLA_BOND_MODE) }

// CarriesOptions reports whether the message carries every bond option
// the model takes from netlink (IFLA_BOND_TLB_DYNAMIC_LB, added in 4.x, is
// the youngest one needed; peer_notif_delay and lacp_active also come from
// procfs), so a link notification can be answered from the dump without
// re-reading sysfs.
func (a *BondAttrs) CarriesOptions() bool {
	return a.Has(unix.IFLA_BOND_AD_SELECT) && a.Has(unix.IFLA_BOND_TLB_DYNAMIC_LB)
}

// AuthoritativeAdInfo reports whether the absence of IFLA_BOND_AD_INFO
// means "no active aggregator": the kernel has sent it since 3.14, the
// release that also added IFLA_BOND_AD_SELECT.
func (a *BondAttrs) AuthoritativeAdInfo() bool { return a.Has(unix.IFLA_BOND_AD_SELECT) }

// FromNetlinkBond converts a bonding master of an RTM_GETLINK dump. attrs
// comes from ParseBondAttrs on the same message; nil means a kernel of 3.14
// or later is assumed, and the values v1.3.1 does not decode stay nil.
// slaveName resolves an ifindex (active slave, primary) to a name; it may
// return "" when the link is not known. Slaves are not filled in: convert
// them with FromNetlinkSlave. Absent attributes stay nil, never 0.
func FromNetlinkBond(link *netlink.Bond, attrs *BondAttrs, slaveName func(ifindex int) string) Bond {
	assumed := attrs == nil
	if assumed {
		attrs = &BondAttrs{present: modernBondAttrs, AdInfo: link.AdInfo}
		if link.TlbDynamicLb >= 0 {
			attrs.present |= 1 << unix.IFLA_BOND_TLB_DYNAMIC_LB
		}
	}
	// A negative value is how netlink.NewLinkBond marks "unset".
	num := func(typ uint16, v int) *int {
		if !attrs.Has(typ) || v < 0 {
			return nil
		}
		return new(v)
	}
	word := func(typ uint16, v int, names []string) *string {
		if !attrs.Has(typ) || v < 0 || v >= len(names) {
			return nil
		}
		return new(names[v])
	}
	ifname := func(idx int) *string {
		if idx <= 0 || slaveName == nil {
			return nil
		}
		if n := slaveName(idx); n != "" {
			return new(n)
		}
		return nil
	}

	a := link.Attrs()
	b := Bond{
		Name:            a.Name,
		Mode:            word(unix.IFLA_BOND_MODE, int(link.Mode), Modes[:]),
		MIIMonMs:        num(unix.IFLA_BOND_MIIMON, link.Miimon),
		UpDelayMs:       num(unix.IFLA_BOND_UPDELAY, link.UpDelay),
		DownDelayMs:     num(unix.IFLA_BOND_DOWNDELAY, link.DownDelay),
		PeerNotifyMs:    attrs.PeerNotifDelayMs,
		ARPIntervalMs:   num(unix.IFLA_BOND_ARP_INTERVAL, link.ArpInterval),
		ARPTargets:      arpTargets(link.ArpIpTargets),
		Primary:         ifname(link.Primary),
		PrimaryReselect: word(unix.IFLA_BOND_PRIMARY_RESELECT, int(link.PrimaryReselect), primaryReselectNames[:]),
		ActiveSlave:     ifname(link.ActiveSlave),
		FailOverMAC:     word(unix.IFLA_BOND_FAIL_OVER_MAC, int(link.FailOverMac), failOverMACNames[:]),
		TLBDynamicLB:    num(unix.IFLA_BOND_TLB_DYNAMIC_LB, link.TlbDynamicLb),
		MTU:             new(a.MTU),
		OperState:       OperState(a.OperState),
		MIIStatus:       bondCarrier(a.RawFlags),
		Counters:        NetlinkCounters(a),
	}
	// Keep sysfs.go's meaning: the policy in force, nil where none is.
	if b.Mode != nil && ModeHashes(*b.Mode, b.TLBDynamicLB) {
		b.XmitHashPolicy = word(unix.IFLA_BOND_XMIT_HASH_POLICY, int(link.XmitHashPolicy), HashPolicies[:])
	}
	if b.Is8023AD() {
		l := &LACP{
			Active:   attrs.LACPActive,
			Rate:     word(unix.IFLA_BOND_AD_LACP_RATE, int(link.LacpRate), lacpRateNames[:]),
			MinLinks: num(unix.IFLA_BOND_MIN_LINKS, link.MinLinks),
			ADSelect: word(unix.IFLA_BOND_AD_SELECT, int(link.AdSelect), adSelectNames[:]),
		}
		// The kernel sends the actor system only to CAP_NET_ADMIN. It is
		// the configured ad_actor_system; all zeros (the default) means
		// the bond's own MAC, which is what LACPDUs and procfs show.
		if len(link.AdActorSystem) == 6 {
			l.SystemPriority = new(link.AdActorSysPrio)
			sys := link.AdActorSystem
			if isZeroMAC(sys) && len(a.HardwareAddr) == 6 {
				sys = a.HardwareAddr
			}
			l.SystemMAC = new(sys.String())
		}
		info := attrs.AdInfo
		if info == nil {
			info = link.AdInfo
		}
		if info != nil {
			l.AggregatorID = new(info.AggregatorId)
			l.NumPorts = new(info.NumPorts)
			l.ActorKey = new(info.ActorKey)
			l.PartnerKey = new(info.PartnerKey)
			if len(info.PartnerMac) == 6 {
				l.PartnerMAC = new(info.PartnerMac.String())
			}
		} else if !assumed && attrs.AuthoritativeAdInfo() {
			l.NoActiveAggregator = true
		}
		b.LACP = l
	}
	return b
}

// The kernel's words for the bond enums, by numeric value (bond_options.c).
var (
	primaryReselectNames = [...]string{"always", "better", "failure"}
	failOverMACNames     = [...]string{"none", "active", "follow"}
	lacpRateNames        = [...]string{"slow", "fast"}
	adSelectNames        = [...]string{"stable", "bandwidth", "count"}
	// slaveMIINames are bond_slave_link_status()'s words for BOND_LINK_*.
	slaveMIINames = [...]string{"up", "going down", "down", "going back"}
	// operStateNames are the words of /sys/class/net/<if>/operstate for
	// IF_OPER_* (vishvananda spells some of them differently).
	operStateNames = [...]string{"unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up"}
)

// OperState names an RFC 2863 operational state as sysfs does ("up",
// "lowerlayerdown", ...); nil for a value the kernel does not define.
func OperState(s netlink.LinkOperState) *string {
	if int(s) >= len(operStateNames) {
		return nil
	}
	return new(operStateNames[s])
}

// bondCarrier is the bond's "MII Status": procfs and sysfs print the
// carrier. IFF_LOWER_UP shows the carrier only while the device is up; a
// bond that is down leaves the field to the other sources.
func bondCarrier(flags uint32) *string {
	if flags&unix.IFF_UP == 0 {
		return nil
	}
	if flags&unix.IFF_LOWER_UP != 0 {
		return new("up")
	}
	return new("down")
}

func arpTargets(ips []net.IP) []string {
	if len(ips) == 0 {
		return nil
	}
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}

func isZeroMAC(mac net.HardwareAddr) bool {
	for _, c := range mac {
		if c != 0 {
			return false
		}
	}
	return true
}

// SlaveAttrs says which IFLA_BOND_SLAVE_* attributes the kernel sent for
// one slave: vishvananda/netlink v1.3.1 decodes them into plain integers,
// where an absent port state reads as 0, a valid state.
type SlaveAttrs struct{ present uint64 }

// Has reports whether the kernel sent the IFLA_BOND_SLAVE_* attribute typ.
func (a *SlaveAttrs) Has(typ uint16) bool {
	return typ < 64 && a.present&(1<<typ) != 0
}

// AuthoritativeAggregator reports whether the absence of an aggregator id
// means the slave has none: kernels that send bond slave attributes at all
// (3.14+) send IFLA_BOND_SLAVE_AD_AGGREGATOR_ID whenever there is one.
func (a *SlaveAttrs) AuthoritativeAggregator() bool {
	return a.Has(unix.IFLA_BOND_SLAVE_QUEUE_ID)
}

// ParseSlaveAttrs finds which bond slave attributes one RTM_NEWLINK message
// (struct ifinfomsg and its attributes) carries. ok is false when the link
// is not enslaved to a bond.
func ParseSlaveAttrs(msg []byte) (attrs SlaveAttrs, ok bool) {
	if len(msg) < unix.SizeofIfInfomsg {
		return SlaveAttrs{}, false
	}
	var data []byte
	slave := false
	walkAttrs(msg[unix.SizeofIfInfomsg:], func(typ uint16, val []byte) bool {
		if typ != unix.IFLA_LINKINFO {
			return true
		}
		walkAttrs(val, func(typ uint16, val []byte) bool {
			switch typ {
			case unix.IFLA_INFO_SLAVE_KIND:
				slave = isBondKind(val)
			case unix.IFLA_INFO_SLAVE_DATA:
				data = val
			}
			return true
		})
		return false
	})
	if !slave || data == nil {
		return SlaveAttrs{}, false
	}
	walkAttrs(data, func(typ uint16, _ []byte) bool {
		if typ < 64 {
			attrs.present |= 1 << typ
		}
		return true
	})
	return attrs, true
}

// allSlaveAttrs is what FromNetlinkSlave assumes without SlaveAttrs: the
// eight attributes of a 4.x+ kernel, the aggregator ones when v1.3.1 shows
// an aggregator id (ids count from 1, so its zero means "not sent").
const allSlaveAttrs = 1<<unix.IFLA_BOND_SLAVE_STATE | 1<<unix.IFLA_BOND_SLAVE_MII_STATUS |
	1<<unix.IFLA_BOND_SLAVE_LINK_FAILURE_COUNT | 1<<unix.IFLA_BOND_SLAVE_PERM_HWADDR |
	1<<unix.IFLA_BOND_SLAVE_QUEUE_ID

const slaveAggregatorAttrs = 1<<unix.IFLA_BOND_SLAVE_AD_AGGREGATOR_ID |
	1<<unix.IFLA_BOND_SLAVE_AD_ACTOR_OPER_PORT_STATE |
	1<<unix.IFLA_BOND_SLAVE_AD_PARTNER_OPER_PORT_STATE

// FromNetlinkSlave converts one link of an RTM_GETLINK dump: name, MTU,
// operstate and 64-bit counters for any link, and the IFLA_BOND_SLAVE_*
// attributes when it is enslaved to a bond. attrs comes from
// ParseSlaveAttrs on the same message; nil assumes a 4.x+ kernel. Speed and
// duplex are not in the dump: see FromEthtoolLinkMode.
func FromNetlinkSlave(link netlink.Link, attrs *SlaveAttrs) Slave {
	a := link.Attrs()
	s := Slave{
		Name:      a.Name,
		MTU:       new(a.MTU),
		OperState: OperState(a.OperState),
		Counters:  NetlinkCounters(a),
	}
	bs, ok := a.Slave.(*netlink.BondSlave)
	if !ok || bs == nil {
		return s
	}
	if attrs == nil {
		attrs = &SlaveAttrs{present: allSlaveAttrs}
		if bs.AggregatorId != 0 {
			attrs.present |= slaveAggregatorAttrs
		}
	}
	if attrs.Has(unix.IFLA_BOND_SLAVE_STATE) {
		switch bs.State {
		case netlink.BondStateActive:
			s.State = new("active")
		case netlink.BondStateBackup:
			s.State = new("backup")
		}
	}
	if attrs.Has(unix.IFLA_BOND_SLAVE_MII_STATUS) && int(bs.MiiStatus) < len(slaveMIINames) {
		s.MIIStatus = new(slaveMIINames[bs.MiiStatus])
	}
	if attrs.Has(unix.IFLA_BOND_SLAVE_LINK_FAILURE_COUNT) {
		s.LinkFailureCount = new(int(bs.LinkFailureCount))
	}
	if attrs.Has(unix.IFLA_BOND_SLAVE_PERM_HWADDR) && len(bs.PermHardwareAddr) > 0 {
		s.PermHWAddr = new(bs.PermHardwareAddr.String())
	}
	if attrs.Has(unix.IFLA_BOND_SLAVE_QUEUE_ID) {
		s.QueueID = new(int(bs.QueueId))
	}
	// The kernel sends the aggregator id and both port states only for an
	// 802.3ad slave that has an aggregator.
	if attrs.Has(unix.IFLA_BOND_SLAVE_AD_AGGREGATOR_ID) {
		s.AggregatorID = new(int(bs.AggregatorId))
	}
	if attrs.Has(unix.IFLA_BOND_SLAVE_AD_ACTOR_OPER_PORT_STATE) {
		s.Actor = &ActorPort{Port{PortState: portState(int(bs.AdActorOperPortState))}}
	}
	if attrs.Has(unix.IFLA_BOND_SLAVE_AD_PARTNER_OPER_PORT_STATE) {
		s.Partner = &PartnerPort{Port{PortState: portState(int(bs.AdPartnerOperPortState))}}
	}
	return s
}

// NetlinkCounters maps a link's IFLA_STATS64 (or IFLA_STATS on kernels
// without it) to our counters, which name the link by its ifindex
// (Counters.Follows). nil statistics give empty Counters.
func NetlinkCounters(a *netlink.LinkAttrs) Counters {
	var cs Counters
	st := a.Statistics
	if st == nil {
		return cs
	}
	if a.Index > 0 {
		cs.SetLink(uint64(a.Index))
	}
	cs.Set(RxBytes, st.RxBytes)
	cs.Set(TxBytes, st.TxBytes)
	cs.Set(RxPackets, st.RxPackets)
	cs.Set(TxPackets, st.TxPackets)
	cs.Set(RxErrors, st.RxErrors)
	cs.Set(TxErrors, st.TxErrors)
	cs.Set(RxDropped, st.RxDropped)
	cs.Set(TxDropped, st.TxDropped)
	cs.Set(RxOverErrors, st.RxOverErrors)
	cs.Set(RxFifoErrors, st.RxFifoErrors)
	return cs
}

// FromEthtoolLinkMode gives an interface's speed and duplex from ethtool.
// The kernel reports an unknown speed (link down, virtual device) as
// SPEED_UNKNOWN, 4294967295, and an unknown duplex as 0xff: both nil.
func FromEthtoolLinkMode(lm *ethtool.LinkMode) (speedMbps *int, duplex *string) {
	if lm == nil {
		return nil, nil
	}
	if lm.SpeedMegabits > 0 && uint32(lm.SpeedMegabits) != math.MaxUint32 {
		speedMbps = new(lm.SpeedMegabits)
	}
	switch lm.Duplex {
	case ethtool.Full:
		duplex = new("full")
	case ethtool.Half:
		duplex = new("half")
	}
	return speedMbps, duplex
}
