package bonding

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// rta builds one netlink attribute, padded to 4 bytes.
func rta(typ uint16, val []byte) []byte {
	b := binary.NativeEndian.AppendUint16(nil, uint16(4+len(val)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, val...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u64(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

// statsMsg is the RTM_NEWSTATS message the kernel sends for a slave of an
// 802.3ad bond (bond_fill_linkxstats): the counters nested three deep.
func statsMsg(counters ...uint64) []byte {
	var inner []byte
	for i, v := range counters {
		inner = append(inner, rta(uint16(i), u64(v))...)
	}
	inner = append(inner, rta(9, nil)...) // BOND_3AD_STAT_PAD
	x := rta(unix.NLA_F_NESTED|iflaStatsLinkXstatsSlave, rta(linkXstatsTypeBond, rta(bondXstats3AD, inner)))
	return append(make([]byte, SizeofIfStatsMsg), x...)
}

func TestParseLACPDUStats(t *testing.T) {
	c, ok := ParseLACPDUStats(statsMsg(41, 42, 1, 2, 3, 4, 5, 6, 7))
	want := LACPDUCounters{41, 42, 1, 2, 3, 4, 5, 6, 7}
	if !ok || *c != want {
		t.Fatalf("got %+v %v, want %+v", c, ok, want)
	}
	// A slave of an active-backup bond: the bond nest is empty.
	empty := append(make([]byte, SizeofIfStatsMsg), rta(iflaStatsLinkXstatsSlave, rta(linkXstatsTypeBond, nil))...)
	if c, ok := ParseLACPDUStats(empty); ok || c != nil {
		t.Errorf("no 3AD nest: %+v %v", c, ok)
	}
	if _, ok := ParseLACPDUStats([]byte{1, 2}); ok {
		t.Error("a short message parsed")
	}
}

func TestParseCarrierCounts(t *testing.T) {
	msg := make([]byte, unix.SizeofIfInfomsg)
	msg = append(msg, rta(unix.IFLA_IFNAME, []byte("eth0\x00"))...)
	msg = append(msg, rta(unix.IFLA_CARRIER_UP_COUNT, binary.NativeEndian.AppendUint32(nil, 5))...)
	if _, _, ok := ParseCarrierCounts(msg); ok {
		t.Error("up count alone parsed: both or nothing")
	}
	msg = append(msg, rta(unix.IFLA_CARRIER_DOWN_COUNT, binary.NativeEndian.AppendUint32(nil, 4))...)
	if name, c, ok := ParseCarrierCounts(msg); !ok || name != "eth0" || *c != (CarrierCounts{5, 4}) {
		t.Errorf("got %q %+v %v", name, c, ok)
	}
}

// TestParseCarrierCountsAllocs: the name and the counts are all it
// allocates, however many other attributes a link message carries (a
// live tick reads every slave's).
func TestParseCarrierCountsAllocs(t *testing.T) {
	msg := make([]byte, unix.SizeofIfInfomsg)
	msg = append(msg, rta(unix.IFLA_IFNAME, []byte("eth0\x00"))...)
	for typ := range uint16(30) {
		if typ != unix.IFLA_IFNAME && typ != unix.IFLA_CARRIER_UP_COUNT && typ != unix.IFLA_CARRIER_DOWN_COUNT {
			msg = append(msg, rta(typ, binary.NativeEndian.AppendUint32(nil, 1500))...)
		}
	}
	msg = append(msg, rta(unix.IFLA_CARRIER_UP_COUNT, binary.NativeEndian.AppendUint32(nil, 5))...)
	msg = append(msg, rta(unix.IFLA_CARRIER_DOWN_COUNT, binary.NativeEndian.AppendUint32(nil, 4))...)
	if name, c, ok := ParseCarrierCounts(msg); !ok || name != "eth0" || *c != (CarrierCounts{5, 4}) {
		t.Fatalf("got %q %+v %v", name, c, ok)
	}
	if n := testing.AllocsPerRun(100, func() { ParseCarrierCounts(msg) }); n > 2 {
		t.Errorf("%v allocations per message, want 2 (the name, the counts)", n)
	}
}

func FuzzParseXstats(f *testing.F) {
	f.Add(statsMsg(1, 2, 3))
	f.Add(append(make([]byte, unix.SizeofIfInfomsg), rta(unix.IFLA_CARRIER_UP_COUNT, []byte{1, 0, 0, 0})...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, ok := ParseLACPDUStats(b); ok != (c != nil) {
			t.Fatalf("ok %v with %v", ok, c)
		}
		if _, c, ok := ParseCarrierCounts(b); ok != (c != nil) {
			t.Fatalf("ok %v with %v", ok, c)
		}
	})
}
