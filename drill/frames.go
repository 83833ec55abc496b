package drill

import (
	"encoding/binary"
	"fmt"
)

// notificationKind is what peerNotification found in a frame.
type notificationKind int

const (
	notNotification notificationKind = iota
	gratuitousARP
	unsolicitedNA
	// membershipReport is an IGMP or MLD report: the bond resends them
	// on a failover (resend_igmp), and they teach a switch the new port
	// as a gratuitous ARP does.
	membershipReport
)

// peerNotification tells a bond's peer notifications from other frames:
// a gratuitous ARP (sender and target address equal, request or reply),
// an unsolicited neighbour advertisement (ICMPv6 136 without the
// solicited flag), or an IGMP/MLD membership report, in an Ethernet frame
// with or without 802.1Q tags.
func peerNotification(f []byte) notificationKind {
	etype, p, ok := ethPayload(f)
	if !ok {
		return notNotification
	}
	switch etype {
	case 0x0806:
		// htype 1, ptype IPv4, hlen 6, plen 4: spa at 14, tpa at 24.
		if len(p) < 28 || binary.BigEndian.Uint16(p[0:]) != 1 || binary.BigEndian.Uint16(p[2:]) != 0x0800 || p[4] != 6 || p[5] != 4 {
			return notNotification
		}
		if string(p[14:18]) == string(p[24:28]) {
			return gratuitousARP
		}
	case 0x0800:
		// IGMP: v1 (0x12), v2 (0x16) and v3 (0x22) reports, after an
		// IPv4 header whose options (Router Alert) it skips.
		if len(p) < 20 || p[0]>>4 != 4 || p[9] != 2 {
			return notNotification
		}
		if ihl := int(p[0]&0x0f) * 4; ihl >= 20 && len(p) > ihl {
			switch p[ihl] {
			case 0x12, 0x16, 0x22:
				return membershipReport
			}
		}
	case 0x86dd:
		next, icmp, ok := ipv6Upper(p)
		if !ok || next != 58 || len(icmp) < 5 {
			return notNotification
		}
		switch icmp[0] {
		case 136: // NA, S flag clear
			if icmp[4]&0x40 == 0 {
				return unsolicitedNA
			}
		case 131, 143: // MLDv1 and MLDv2 reports
			return membershipReport
		}
	}
	return notNotification
}

// ethPayload is a frame's ethertype and payload after any 802.1Q/802.1ad
// tags.
func ethPayload(f []byte) (uint16, []byte, bool) {
	if len(f) < 14 {
		return 0, nil, false
	}
	etype := binary.BigEndian.Uint16(f[12:])
	p := f[14:]
	for (etype == 0x8100 || etype == 0x88a8) && len(p) >= 4 {
		etype = binary.BigEndian.Uint16(p[2:])
		p = p[4:]
	}
	return etype, p, true
}

// ipv6Upper is an IPv6 packet's upper-layer protocol and payload, past a
// hop-by-hop options header (MLD carries Router Alert in one).
func ipv6Upper(p []byte) (uint8, []byte, bool) {
	if len(p) < 40 || p[0]>>4 != 6 {
		return 0, nil, false
	}
	next, rest := p[6], p[40:]
	if next == 0 {
		if len(rest) < 8 {
			return 0, nil, false
		}
		n := (int(rest[1]) + 1) * 8
		if len(rest) < n {
			return 0, nil, false
		}
		next, rest = rest[0], rest[n:]
	}
	return next, rest, true
}

// describeFrame names what a frame this host sent is, in a few words, for
// the drill's report of what left during the hold.
func describeFrame(f []byte) string {
	etype, p, ok := ethPayload(f)
	if !ok {
		return "runt frame"
	}
	switch etype {
	case 0x0806:
		if len(p) >= 8 {
			switch binary.BigEndian.Uint16(p[6:]) {
			case 1:
				return "ARP request"
			case 2:
				return "ARP reply"
			}
		}
		return "ARP"
	case 0x0800:
		if len(p) < 20 {
			return "IPv4"
		}
		return "IPv4 " + protoName(p[9])
	case 0x86dd:
		next, up, ok := ipv6Upper(p)
		if !ok {
			return "IPv6"
		}
		if next == 58 && len(up) > 0 {
			return fmt.Sprintf("ICMPv6 type %d", up[0])
		}
		return "IPv6 " + protoName(next)
	case 0x8809:
		return "LACPDU/marker"
	case 0x88cc:
		return "LLDP"
	}
	return fmt.Sprintf("ethertype %#04x", etype)
}

func protoName(p uint8) string {
	switch p {
	case 1:
		return "ICMP"
	case 2:
		return "IGMP"
	case 6:
		return "TCP"
	case 17:
		return "UDP"
	case 58:
		return "ICMPv6"
	}
	return fmt.Sprintf("protocol %d", p)
}
