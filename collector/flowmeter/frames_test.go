package flowmeter

import (
	"encoding/binary"
	"net/netip"

	"github.com/bondtop/bondtop/bonding"
)

// frameOf builds the Ethernet frame a bonding.Flow describes, with the
// VLAN tag in the frame when tpid is set: what a slave would carry.
func frameOf(f bonding.Flow, tpid uint16) []byte {
	b := append([]byte{}, f.DstMAC[:]...)
	b = append(b, f.SrcMAC[:]...)
	if tpid != 0 {
		b = binary.BigEndian.AppendUint16(b, tpid)
		b = binary.BigEndian.AppendUint16(b, f.VLAN)
	}
	et := f.EtherType
	if et == 0 {
		et = bonding.EtherTypeIPv4
		if f.Src.Is6() {
			et = bonding.EtherTypeIPv6
		}
	}
	b = binary.BigEndian.AppendUint16(b, et)
	if et != bonding.EtherTypeIPv4 && et != bonding.EtherTypeIPv6 {
		return append(b, make([]byte, 46)...)
	}
	var l4 []byte
	switch f.Proto {
	case bonding.ProtoICMP, bonding.ProtoICMPv6:
		l4 = []byte{f.ICMPType, f.ICMPCode, 0, 0, byte(f.ICMPID >> 8), byte(f.ICMPID), 0, 1}
		if q := f.Quoted; q.Src.IsValid() {
			l4 = append(l4, ipHeaderOf(q.Src, q.Dst, q.Proto, q.Fragment, 8)...)
			l4 = binary.BigEndian.AppendUint16(l4, q.SrcPort)
			l4 = binary.BigEndian.AppendUint16(l4, q.DstPort)
			l4 = append(l4, 0, 8, 0, 0)
		}
	case bonding.ProtoESP:
		l4 = binary.BigEndian.AppendUint32(nil, f.SPI)
		l4 = append(l4, 0, 0, 0, 1)
	case bonding.ProtoAH:
		l4 = []byte{bonding.ProtoUDP, 4, 0, 0}
		l4 = binary.BigEndian.AppendUint32(l4, f.SPI)
		l4 = append(l4, make([]byte, 16)...)
	default:
		l4 = binary.BigEndian.AppendUint16(nil, f.SrcPort)
		l4 = binary.BigEndian.AppendUint16(l4, f.DstPort)
		l4 = append(l4, make([]byte, 16)...)
	}
	b = append(b, ipHeaderOf(f.Src, f.Dst, f.Proto, f.Fragment, len(l4))...)
	return append(b, l4...)
}

// ipHeaderOf is an IPv4 or IPv6 header (with a fragment header for an
// IPv6 fragment) in front of n bytes of payload.
func ipHeaderOf(src, dst netip.Addr, proto uint8, fragment bool, n int) []byte {
	if src.Is4() {
		h := make([]byte, 20)
		h[0] = 0x45
		binary.BigEndian.PutUint16(h[2:], uint16(20+n))
		if fragment {
			binary.BigEndian.PutUint16(h[6:], 0x2000) // more fragments, offset 0
		}
		h[8], h[9] = 64, proto
		s, d := src.As4(), dst.As4()
		copy(h[12:], s[:])
		copy(h[16:], d[:])
		return h
	}
	h := make([]byte, 40)
	h[0] = 0x60
	h[6], h[7] = proto, 64
	s, d := src.As16(), dst.As16()
	copy(h[8:], s[:])
	copy(h[24:], d[:])
	if fragment {
		h[6] = 44
		h = append(h, proto, 0, 0, 1, 0, 0, 0, 7) // offset 0, more fragments
		n += 8
	}
	binary.BigEndian.PutUint16(h[4:], uint16(n))
	return h
}
