package neighbors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// Frame kinds the listener's filter lets through.
const (
	EtherTypeLLDP = 0x88cc
	EtherTypeSlow = 0x8809 // LACP and marker PDUs
	etherTypeVLAN = 0x8100
	cdpSNAPPID    = 0x2000
)

var (
	cdpDst  = [6]byte{0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc}
	cdpSNAP = [6]byte{0xaa, 0xaa, 0x03, 0x00, 0x00, 0x0c} // LLC DSAP SSAP ctrl, Cisco OUI
)

// ErrNotNeighbor means the frame is neither LLDP nor CDP.
var ErrNotNeighbor = errors.New("not an LLDP or CDP frame")

// Decode reads one Ethernet frame (destination MAC first, an 802.1Q tag
// allowed) carrying LLDP or CDP. A frame of another kind is ErrNotNeighbor;
// a truncated or malformed one is an error naming what is wrong.
func Decode(frame []byte) (*Neighbor, error) {
	if len(frame) < 14 {
		return nil, fmt.Errorf("frame of %d bytes is shorter than an Ethernet header", len(frame))
	}
	off := 12
	typ := binary.BigEndian.Uint16(frame[off:])
	if typ == etherTypeVLAN {
		if len(frame) < 18 {
			return nil, errors.New("802.1Q tag truncated")
		}
		off += 4
		typ = binary.BigEndian.Uint16(frame[off:])
	}
	off += 2
	switch {
	case typ == EtherTypeLLDP:
		return decodeLLDP(frame[off:])
	case typ <= 1500 && [6]byte(frame[:6]) == cdpDst:
		body := frame[off:]
		if int(typ) < len(body) {
			body = body[:typ] // the 802.3 length; the rest is padding
		}
		if len(body) < 8 || [6]byte(body[:6]) != cdpSNAP || binary.BigEndian.Uint16(body[6:]) != cdpSNAPPID {
			return nil, ErrNotNeighbor
		}
		return decodeCDP(body[8:])
	}
	return nil, ErrNotNeighbor
}

// LLDP TLV types (IEEE 802.1AB) and organisationally specific subtypes.
const (
	tlvEnd         = 0
	tlvChassisID   = 1
	tlvPortID      = 2
	tlvTTL         = 3
	tlvPortDescr   = 4
	tlvSysName     = 5
	tlvSysDescr    = 6
	tlvMgmtAddr    = 8
	tlvOrgSpecific = 127

	dot1PortVLAN     = 1
	dot1VLANName     = 3
	dot1LinkAgg      = 7
	dot3MACPHY       = 1
	dot3LinkAgg      = 3
	dot3MaxFrameSize = 4
)

var (
	oui8021 = [3]byte{0x00, 0x80, 0xc2}
	oui8023 = [3]byte{0x00, 0x12, 0x0f}
)

func decodeLLDP(b []byte) (*Neighbor, error) {
	n := &Neighbor{Protocol: ProtoLLDP}
	seen := 0 // the mandatory chassis, port and TTL TLVs, in order
	for len(b) > 0 {
		if len(b) < 2 {
			return nil, errors.New("LLDP TLV header truncated")
		}
		h := binary.BigEndian.Uint16(b)
		typ, l := int(h>>9), int(h&0x1ff)
		if len(b) < 2+l {
			return nil, fmt.Errorf("LLDP TLV type %d claims %d bytes, %d left", typ, l, len(b)-2)
		}
		v := b[2 : 2+l]
		b = b[2+l:]
		if seen < 3 && typ != seen+1 {
			return nil, fmt.Errorf("LLDP TLV type %d where mandatory TLV %d belongs", typ, seen+1)
		}
		switch typ {
		case tlvEnd:
			return n, nil
		case tlvChassisID:
			if l < 2 {
				return nil, errors.New("LLDP chassis id empty")
			}
			n.ChassisIDSubtype, n.ChassisID = idText(v[0], v[1:], chassisSubtypes)
		case tlvPortID:
			if l < 2 {
				return nil, errors.New("LLDP port id empty")
			}
			n.PortIDSubtype, n.PortID = idText(v[0], v[1:], portSubtypes)
		case tlvTTL:
			if l < 2 {
				return nil, errors.New("LLDP TTL shorter than 2 bytes")
			}
			n.TTLSeconds = int(binary.BigEndian.Uint16(v))
		case tlvPortDescr:
			n.PortDescription = text(v)
		case tlvSysName:
			n.SystemName = text(v)
		case tlvSysDescr:
			n.SystemDescription = text(v)
		case tlvMgmtAddr:
			if a, ok := mgmtAddr(v); ok {
				n.ManagementAddresses = append(n.ManagementAddresses, a)
			}
		case tlvOrgSpecific:
			if l >= 4 {
				n.orgTLV([3]byte(v[:3]), v[3], v[4:])
			}
		}
		if seen < 3 {
			seen++
		}
	}
	if seen < 3 {
		return nil, errors.New("LLDP frame lacks its chassis id, port id or TTL")
	}
	return n, nil // no End TLV: tolerated, as lldpd does
}

// orgTLV decodes the 802.1 and 802.3 TLVs; other organisations' are skipped.
func (n *Neighbor) orgTLV(oui [3]byte, sub byte, v []byte) {
	switch {
	case oui == oui8021 && sub == dot1PortVLAN && len(v) >= 2:
		if vid := int(binary.BigEndian.Uint16(v)); vid != 0 { // 0: no port VLAN
			n.PortVLANID = &vid
		}
	case oui == oui8021 && sub == dot1VLANName && len(v) >= 3:
		nl := int(v[2])
		if 3+nl <= len(v) {
			n.VLANs = append(n.VLANs, VLAN{ID: int(binary.BigEndian.Uint16(v)), Name: cleanText(v[3 : 3+nl])})
		}
	case (oui == oui8021 && sub == dot1LinkAgg || oui == oui8023 && sub == dot3LinkAgg) && len(v) >= 5:
		a := &Aggregation{Capable: v[0]&1 != 0, Enabled: v[0]&2 != 0}
		if id := int(binary.BigEndian.Uint32(v[1:])); id != 0 && a.Enabled {
			a.PortID = &id
		}
		n.Aggregation = a
	case oui == oui8023 && sub == dot3MACPHY && len(v) >= 5:
		n.Autoneg = &Autoneg{Supported: v[0]&1 != 0, Enabled: v[0]&2 != 0}
		if mau := int(binary.BigEndian.Uint16(v[3:])); mau != 0 {
			n.MAUType = &mau
		}
	case oui == oui8023 && sub == dot3MaxFrameSize && len(v) >= 2:
		m := int(binary.BigEndian.Uint16(v))
		n.MaxFrameSize = &m
	}
}

var chassisSubtypes = [8]string{1: "chassis_component", 2: "ifalias", 3: "port_component", 4: "mac", 5: "ip", 6: "ifname", 7: "local"}
var portSubtypes = [8]string{1: "ifalias", 2: "port_component", 3: "mac", 4: "ip", 5: "ifname", 6: "agent_circuit_id", 7: "local"}

// idText renders a chassis or port id the way lldpcli shows it.
func idText(sub byte, v []byte, names [8]string) (string, string) {
	name := "unknown"
	if int(sub) < len(names) && names[sub] != "" {
		name = names[sub]
	}
	switch name {
	case "mac":
		if len(v) == 6 {
			return name, macText(v)
		}
	case "ip":
		if a, ok := familyAddr(v); ok {
			return name, a
		}
	case "ifalias", "ifname", "local", "chassis_component", "port_component", "agent_circuit_id":
		if utf8.Valid(v) {
			return name, cleanText(v)
		}
	}
	return name, hexText(v)
}

// familyAddr reads an IANA address family byte and the address.
func familyAddr(v []byte) (string, bool) {
	if len(v) < 1 {
		return "", false
	}
	a := v[1:]
	switch {
	case v[0] == 1 && len(a) == 4:
		return netip.AddrFrom4([4]byte(a)).String(), true
	case v[0] == 2 && len(a) == 16:
		return netip.AddrFrom16([16]byte(a)).String(), true
	case v[0] == 6 && len(a) == 6:
		return macText(a), true
	}
	return "", false
}

// mgmtAddr reads a management address TLV's address (the interface
// numbering and OID that follow say nothing an admin looks for).
func mgmtAddr(v []byte) (string, bool) {
	if len(v) < 2 {
		return "", false
	}
	l := int(v[0]) // family byte plus address
	if l < 1 || 1+l > len(v) {
		return "", false
	}
	return familyAddr(v[1 : 1+l])
}

func text(v []byte) *string {
	s := cleanText(v)
	return &s
}

// cleanText makes a sender's bytes safe to print: valid UTF-8, no control
// characters (a newline in a system description would break a table row),
// trailing NULs and blanks dropped.
func cleanText(v []byte) string {
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(string(v), "\uFFFD"))
	return strings.TrimRight(s, " ")
}

func macText(v []byte) string {
	var sb strings.Builder
	for i, c := range v {
		if i > 0 {
			sb.WriteByte(':')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}

func hexText(v []byte) string { return fmt.Sprintf("%x", v) }
