package neighbors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// CDP TLV types (Cisco's published list, as other agents decode them).
const (
	cdpDeviceID    = 0x0001
	cdpAddresses   = 0x0002
	cdpPortID      = 0x0003
	cdpSoftware    = 0x0005
	cdpPlatform    = 0x0006
	cdpNativeVLAN  = 0x000a
	cdpMTU         = 0x0011
	cdpMgmtAddress = 0x0016

	// ethernetOverhead is what a maximum frame size adds to an MTU:
	// header (14) and FCS (4).
	ethernetOverhead = 18
)

// decodeCDP reads a CDP PDU (after the SNAP header). CDP has no chassis id:
// its device id stands for both the chassis and the system name, as
// lldpd shows it.
func decodeCDP(b []byte) (*Neighbor, error) {
	if len(b) < 4 {
		return nil, errors.New("CDP header truncated")
	}
	if b[0] != 1 && b[0] != 2 {
		return nil, fmt.Errorf("CDP version %d unknown", b[0])
	}
	n := &Neighbor{Protocol: ProtoCDP, TTLSeconds: int(b[1])}
	b = b[4:]
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, errors.New("CDP TLV header truncated")
		}
		typ, l := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		if l < 4 || l > len(b) {
			return nil, fmt.Errorf("CDP TLV type %#04x claims %d bytes, %d left", typ, l, len(b))
		}
		v := b[4:l]
		b = b[l:]
		switch typ {
		case cdpDeviceID:
			n.ChassisIDSubtype, n.ChassisID = "local", cleanText(v)
			n.SystemName = text(v)
		case cdpPortID:
			n.PortIDSubtype, n.PortID = "ifname", cleanText(v)
			n.PortDescription = text(v)
		case cdpSoftware:
			n.SystemDescription = text(v)
		case cdpPlatform:
			n.Platform = text(v)
		case cdpAddresses, cdpMgmtAddress:
			n.ManagementAddresses = appendNew(n.ManagementAddresses, cdpAddrs(v)...)
		case cdpNativeVLAN:
			if len(v) >= 2 {
				vid := int(binary.BigEndian.Uint16(v))
				n.PortVLANID = &vid
			}
		case cdpMTU:
			if len(v) >= 4 {
				m := int(binary.BigEndian.Uint32(v)) + ethernetOverhead
				n.MaxFrameSize = &m
			}
		}
	}
	if n.ChassisID == "" {
		return nil, errors.New("CDP frame lacks a device id")
	}
	return n, nil
}

// cdpAddrs reads a CDP address list: a count, then per address a protocol
// type and id (NLPID 0xcc: IPv4; 802.2 with the IPv6 ethertype: IPv6) and
// the address. Unknown protocols are skipped; a malformed list ends early.
func cdpAddrs(v []byte) []string {
	if len(v) < 4 {
		return nil
	}
	count := binary.BigEndian.Uint32(v)
	v = v[4:]
	var out []string
	for ; count > 0 && len(v) >= 2; count-- {
		pl := int(v[1])
		if len(v) < 2+pl+2 {
			break
		}
		proto := v[2 : 2+pl]
		al := int(binary.BigEndian.Uint16(v[2+pl:]))
		rest := v[2+pl+2:]
		if al > len(rest) {
			break
		}
		addr := rest[:al]
		v = rest[al:]
		switch {
		case pl == 1 && proto[0] == 0xcc && al == 4:
			out = append(out, netip.AddrFrom4([4]byte(addr)).String())
		case pl == 8 && proto[6] == 0x86 && proto[7] == 0xdd && al == 16:
			out = append(out, netip.AddrFrom16([16]byte(addr)).String())
		}
	}
	return out
}

func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		dup := false
		for _, have := range list {
			dup = dup || have == a
		}
		if !dup {
			list = append(list, a)
		}
	}
	return list
}
