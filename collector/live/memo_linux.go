package live

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
	// counters is where msg's counters lie (counterSpans): a message
	// like it but for them is the same outside those payloads.
	counters counterLayout
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
	// message stays: the counts are not counters to counterLayout, so
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
func (s *Source) memoFor(msg []byte) *linkMemo {
	if len(msg) < unix.SizeofIfInfomsg {
		return nil
	}
	m := s.memo[int32(binary.NativeEndian.Uint32(msg[4:8]))]
	if m == nil || !m.counters.sameOutside(m.msg, msg) {
		return nil
	}
	if st := m.link.Attrs().Statistics; st != nil && !m.counters.readStats(msg, st) {
		return nil
	}
	copy(m.msg, msg)
	return m
}

// remember keeps link, decoded from msg, as its ifindex's memo.
func (s *Source) remember(msg []byte, link netlink.Link) *linkMemo {
	m := &linkMemo{msg: msg, link: link, counters: counterSpans(msg)}
	s.memo[int32(link.Attrs().Index)] = m
	return m
}

// counterLayout is where a link message's counter attributes lie: the
// payloads of its IFLA_STATS, IFLA_STATS64 and IFLA_AF_SPEC (the kernel
// sends each once), in order, and which is which. A memo's message keeps
// its layout: what replaces it is the same outside those payloads.
type counterLayout struct {
	spans          [3][2]int // [start, end) of each payload
	n              int
	stats, stats64 int  // the index in spans of each, or -1
	ok             bool // the message's attributes were well formed
}

// counterSpans finds msg's counter attributes. Well formed means that
// each attribute's length holds its header and stays in msg; up to three
// bytes after the last are padding.
func counterSpans(msg []byte) counterLayout {
	cl := counterLayout{stats: -1, stats64: -1}
	if len(msg) < unix.SizeofIfInfomsg {
		return cl
	}
	off := unix.SizeofIfInfomsg
	for len(msg)-off >= unix.SizeofRtAttr {
		l := int(binary.NativeEndian.Uint16(msg[off:]))
		typ := binary.NativeEndian.Uint16(msg[off+2:]) &^ unix.NLA_F_NESTED
		if l < unix.SizeofRtAttr || l > len(msg)-off {
			return cl
		}
		if counterAttr(typ) {
			if cl.n == len(cl.spans) {
				return cl // more than the kernel sends: decode anew
			}
			switch typ {
			case unix.IFLA_STATS:
				cl.stats = cl.n
			case unix.IFLA_STATS64:
				cl.stats64 = cl.n
			}
			cl.spans[cl.n] = [2]int{off + unix.SizeofRtAttr, off + l}
			cl.n++
		}
		off += min((l+unix.RTA_ALIGNTO-1)&^(unix.RTA_ALIGNTO-1), len(msg)-off)
	}
	cl.ok = true
	return cl
}

// sameOutside reports whether msg is old, whose layout cl is, but for
// the counters' payloads: the same length and the same bytes elsewhere,
// attribute headers included, so the same attributes in the same places.
// Compared as a few runs of bytes rather than attribute by attribute:
// the live source asks this of every bond's and slave's message a tick.
func (cl *counterLayout) sameOutside(old, msg []byte) bool {
	if !cl.ok || len(old) != len(msg) {
		return false
	}
	from := 0
	for _, sp := range cl.spans[:cl.n] {
		if !bytes.Equal(old[from:sp[0]], msg[from:sp[0]]) {
			return false
		}
		from = sp[1]
	}
	return bytes.Equal(old[from:], msg[from:])
}

// readStats puts msg's counters, where its layout cl says they are,
// into st as vishvananda/netlink decodes them: IFLA_STATS64, else
// IFLA_STATS widened. false when msg has neither.
func (cl *counterLayout) readStats(msg []byte, st *netlink.LinkStatistics) bool {
	const fields = int(unsafe.Sizeof(netlink.LinkStatistics64{}) / 8)
	dst := (*[fields]uint64)(unsafe.Pointer(st))
	if i := cl.stats64; i >= 0 {
		val := msg[cl.spans[i][0]:cl.spans[i][1]]
		if len(val) < fields*8 {
			return false
		}
		for j := range dst {
			dst[j] = binary.NativeEndian.Uint64(val[j*8:])
		}
		return true
	}
	if i := cl.stats; i >= 0 {
		val := msg[cl.spans[i][0]:cl.spans[i][1]]
		if len(val) < fields*4 {
			return false
		}
		for j := range dst {
			dst[j] = uint64(binary.NativeEndian.Uint32(val[j*4:]))
		}
		return true
	}
	return false
}

// forget drops the memos the last decode did not use: links deleted, or
// no longer a bond's.
func (s *Source) forget(decode uint64) {
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
