package collector

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/bonding"
)

// linkMemo is a link's message of an earlier dump, decoded. From one tick
// to the next a bond's or a slave's message mostly differs only in its
// counters (and in IPv6's own counters inside IFLA_AF_SPEC, which nothing
// here decodes): then the link decoded before, and the slave built from
// it, serve again with the new counters, instead of decoding dozens of
// attributes into new values (vishvananda/netlink allocates for each).
type linkMemo struct {
	// msg is the message link was decoded from, the memo's own copy:
	// link keeps slices of it. A later message that differs only in
	// the counters is copied over it.
	msg  []byte
	link netlink.Link
	// scan is what bonding.ScanLink found in msg: whether the dump
	// keeps the message.
	scan bonding.LinkScan
	// The decoded attributes of a bond or a slave (decode), and the slave
	// built from the link (readBond; slaveOK once it is).
	bondAttrs  bonding.BondAttrs
	slaveAttrs bonding.SlaveAttrs
	attrsOK    bool
	slave      bonding.Slave
	slaveOK    bool
	// The bond built from the link (readBond; bondOK once it is), and
	// the slaves, by ifindex and name, it was built with: it names its
	// active slave and primary through them.
	bond       bonding.Bond
	bondOK     bool
	bondBuilt  uint64 // counts the builds of bond
	bondSlaves []slaveRef
	seen       uint64 // the decode that last used it
	// carrier is the link's carrier counts (carrierOK once decoded, nil
	// when the message has none), handed to every snapshot while the
	// message stays: the counts are not counters to sameButCounters, so
	// a change of them makes a new memo.
	carrier   *bonding.CarrierCounts
	carrierOK bool
}

// slaveRef is a slave's ifindex and name.
type slaveRef struct {
	index int
	name  string
}

// sameSlaves reports whether mine are the slaves refs lists.
func sameSlaves(refs []slaveRef, mine []dumpedSlave) bool {
	if len(refs) != len(mine) {
		return false
	}
	for i := range mine {
		if a := mine[i].link.Attrs(); a.Index != refs[i].index || a.Name != refs[i].name {
			return false
		}
	}
	return true
}

// memoFor returns the memo of msg's link when msg says what the memo's
// message said but for the counters, after putting the new counters into
// its link; nil when msg is news.
func (s *LiveSource) memoFor(msg []byte) *linkMemo {
	if len(msg) < unix.SizeofIfInfomsg {
		return nil
	}
	m := s.memo[int32(binary.NativeEndian.Uint32(msg[4:8]))]
	if m == nil || !sameButCounters(m.msg, msg) {
		return nil
	}
	if st := m.link.Attrs().Statistics; st != nil && !readLinkStats(msg, st) {
		return nil
	}
	copy(m.msg, msg)
	return m
}

// remember keeps link, decoded from msg, as its ifindex's memo.
func (s *LiveSource) remember(msg []byte, link netlink.Link) *linkMemo {
	m := &linkMemo{msg: msg, link: link}
	s.memo[int32(link.Attrs().Index)] = m
	return m
}

// forget drops the memos the last decode did not use: links deleted, or
// no longer a bond's.
func (s *LiveSource) forget(decode uint64) {
	for idx, m := range s.memo {
		if m.seen != decode {
			delete(s.memo, idx)
		}
	}
}

// counterAttr reports the attributes that change while nothing else does:
// the counters, and IFLA_AF_SPEC (IPv6 keeps counters there) which
// nothing here decodes.
func counterAttr(typ uint16) bool {
	return typ == unix.IFLA_STATS || typ == unix.IFLA_STATS64 || typ == unix.IFLA_AF_SPEC
}

// sameButCounters compares two link messages attribute by attribute: the
// same header, the same attributes in the same order and of the same
// lengths, and the same bytes in each but the counters.
func sameButCounters(old, msg []byte) bool {
	if len(old) < unix.SizeofIfInfomsg || !bytes.Equal(old[:unix.SizeofIfInfomsg], msg[:unix.SizeofIfInfomsg]) {
		return false
	}
	a, b := old[unix.SizeofIfInfomsg:], msg[unix.SizeofIfInfomsg:]
	for len(a) >= unix.SizeofRtAttr && len(b) >= unix.SizeofRtAttr {
		la, lb := int(binary.NativeEndian.Uint16(a[0:2])), int(binary.NativeEndian.Uint16(b[0:2]))
		if la != lb || la < unix.SizeofRtAttr || la > len(a) || lb > len(b) ||
			binary.NativeEndian.Uint16(a[2:4]) != binary.NativeEndian.Uint16(b[2:4]) {
			return false
		}
		if !counterAttr(binary.NativeEndian.Uint16(a[2:4])&^unix.NLA_F_NESTED) && !bytes.Equal(a[:la], b[:lb]) {
			return false
		}
		adv := min((la+unix.RTA_ALIGNTO-1)&^(unix.RTA_ALIGNTO-1), len(a), len(b))
		a, b = a[adv:], b[adv:]
	}
	return len(a) == len(b)
}

// readLinkStats puts msg's counters into st as vishvananda/netlink
// decodes them: IFLA_STATS64, else IFLA_STATS widened. false when msg
// has neither.
func readLinkStats(msg []byte, st *netlink.LinkStatistics) bool {
	const fields = int(unsafe.Sizeof(netlink.LinkStatistics64{}) / 8)
	var stats32 []byte
	found := false
	b := msg[unix.SizeofIfInfomsg:]
	for len(b) >= unix.SizeofRtAttr {
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		if l < unix.SizeofRtAttr || l > len(b) {
			break
		}
		val := b[unix.SizeofRtAttr:l]
		switch binary.NativeEndian.Uint16(b[2:4]) {
		case unix.IFLA_STATS64:
			if len(val) < fields*8 {
				return false
			}
			dst := (*[fields]uint64)(unsafe.Pointer(st))
			for i := range dst {
				dst[i] = binary.NativeEndian.Uint64(val[i*8:])
			}
			found = true
		case unix.IFLA_STATS:
			stats32 = val
		}
		adv := (l + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1)
		if adv >= len(b) {
			break
		}
		b = b[adv:]
	}
	if found {
		return true
	}
	if len(stats32) < fields*4 {
		return false
	}
	dst := (*[fields]uint64)(unsafe.Pointer(st))
	for i := range dst {
		dst[i] = uint64(binary.NativeEndian.Uint32(stats32[i*4:]))
	}
	return true
}
