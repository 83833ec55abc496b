package flowmeter

import (
	"encoding/binary"
	"errors"
	"net/netip"

	"github.com/bondtop/bondtop/bonding"
)

// The header parser of the sampled meter: the same reading of a frame as
// the eBPF program's (bpf/flowmeter.c), from a captured frame's first
// bytes. Pure: it knows nothing of sockets.

// ErrShortFrame is a frame without a whole Ethernet header.
var ErrShortFrame = errors.New("frame shorter than an Ethernet header")

// Frame is what ParseFrame needs besides the bytes: the VLAN tag the
// kernel took out of the frame (AF_PACKET's auxiliary data), if any.
type Frame struct {
	Data []byte
	// TagOffloaded says the frame's tag is in VLAN, not in Data.
	TagOffloaded bool
	VLAN         uint16
}

// ParseFrame fills k's frame fields (not Ifindex or Direction) and the
// MACs from a frame that starts at its Ethernet header. Headers cut short
// by the capture leave the fields they would fill at zero; only a frame
// without an Ethernet header is an error.
func ParseFrame(fr Frame, k *Key, src, dst *[6]byte) error {
	b := fr.Data
	if len(b) < 14 {
		return ErrShortFrame
	}
	copy(dst[:], b[0:6])
	copy(src[:], b[6:12])
	proto := binary.BigEndian.Uint16(b[12:14])
	off := 14
	if fr.TagOffloaded {
		k.VLAN = fr.VLAN
	} else if (proto == 0x8100 || proto == 0x88A8) && len(b) >= 18 {
		k.FrameTPID = proto
		k.VLAN = binary.BigEndian.Uint16(b[14:16])
		proto = binary.BigEndian.Uint16(b[16:18])
		off = 18
	}
	k.EtherType = proto
	if proto != bonding.EtherTypeIPv4 && proto != bonding.EtherTypeIPv6 {
		return nil
	}
	v6 := proto == bonding.EtherTypeIPv6
	h, ok := parseIP(b, off, v6)
	if !ok {
		return nil
	}
	k.Src, k.Dst, k.Proto, k.Fragment = h.src, h.dst, h.proto, h.fragment
	switch {
	case h.fragment:
	case h.proto == bonding.ProtoICMP || h.proto == bonding.ProtoICMPv6:
		parseICMP(b, h.l4, v6, k)
	default:
		k.SrcPort, k.DstPort = ports(b, h.l4, h.proto)
	}
	return nil
}

type ipHeader struct {
	src, dst netip.Addr
	proto    uint8
	fragment bool
	l4       int // offset of the layer 4 header
}

// parseIP reads the IP header at off (see parse_ip in the C program).
func parseIP(b []byte, off int, v6 bool) (h ipHeader, ok bool) {
	if !v6 {
		if len(b) < off+20 || b[off]>>4 != 4 {
			return h, false
		}
		ihl := int(b[off]&0x0f) * 4
		if ihl < 20 {
			return h, false
		}
		h.fragment = binary.BigEndian.Uint16(b[off+6:])&0x3fff != 0
		h.proto = b[off+9]
		h.src = netip.AddrFrom4([4]byte(b[off+12 : off+16]))
		h.dst = netip.AddrFrom4([4]byte(b[off+16 : off+20]))
		h.l4 = off + ihl
		return h, true
	}
	if len(b) < off+40 || b[off]>>4 != 6 {
		return h, false
	}
	h.proto = b[off+6]
	h.src = netip.AddrFrom16([16]byte(b[off+8 : off+24]))
	h.dst = netip.AddrFrom16([16]byte(b[off+24 : off+40]))
	h.l4 = off + 40
	if h.proto == 44 {
		if len(b) < off+48 {
			return h, false
		}
		h.fragment = true
		h.proto = b[off+40]
		h.l4 = off + 48
	}
	return h, true
}

func hasPorts(proto uint8) bool {
	switch proto {
	case bonding.ProtoTCP, bonding.ProtoUDP, bonding.ProtoDCCP, bonding.ProtoSCTP, bonding.ProtoUDPLite:
		return true
	}
	return false
}

// ports reads the port pair, or the SPI of ESP and AH as two halves.
func ports(b []byte, off int, proto uint8) (uint16, uint16) {
	switch {
	case hasPorts(proto), proto == bonding.ProtoESP:
	case proto == bonding.ProtoAH:
		off += 4
	default:
		return 0, 0
	}
	if len(b) < off+4 {
		return 0, 0
	}
	return binary.BigEndian.Uint16(b[off:]), binary.BigEndian.Uint16(b[off+2:])
}

func icmpHasID(t uint8) bool {
	switch t {
	case 0, 8, 13, 14, 128, 129:
		return true
	}
	return false
}

func icmpIsErr(proto, t uint8) bool {
	if proto == bonding.ProtoICMPv6 {
		return t >= 1 && t <= 4
	}
	switch t {
	case 3, 4, 5, 11, 12:
		return true
	}
	return false
}

func parseICMP(b []byte, off int, v6 bool, k *Key) {
	if len(b) < off+8 {
		return
	}
	k.ICMPType, k.ICMPCode = b[off], b[off+1]
	if icmpHasID(k.ICMPType) {
		k.DstPort = binary.BigEndian.Uint16(b[off+4:])
	}
	if !icmpIsErr(k.Proto, k.ICMPType) {
		return
	}
	q, ok := parseIP(b, off+8, v6)
	if !ok {
		return
	}
	k.Quoted = bonding.Quoted{Src: q.src, Dst: q.dst, Proto: q.proto, Fragment: q.fragment}
	if !q.fragment && hasPorts(q.proto) {
		k.Quoted.SrcPort, k.Quoted.DstPort = ports(b, q.l4, q.proto)
	}
}
