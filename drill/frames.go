package drill

import "encoding/binary"

// notificationKind is what peerNotification found in a frame.
type notificationKind int

const (
	notNotification notificationKind = iota
	gratuitousARP
	unsolicitedNA
)

// peerNotification tells a bond's peer notifications from other frames:
// a gratuitous ARP (sender and target address equal, request or reply)
// or an unsolicited neighbour advertisement (ICMPv6 136 without the
// solicited flag), in an Ethernet frame with or without 802.1Q tags.
func peerNotification(f []byte) notificationKind {
	if len(f) < 14 {
		return notNotification
	}
	etype := binary.BigEndian.Uint16(f[12:])
	p := f[14:]
	for (etype == 0x8100 || etype == 0x88a8) && len(p) >= 4 {
		etype = binary.BigEndian.Uint16(p[2:])
		p = p[4:]
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
	case 0x86dd:
		// ICMPv6 right after the fixed header (no extension headers:
		// neighbour discovery carries none), type 136, S flag clear.
		if len(p) >= 48 && p[6] == 58 && p[40] == 136 && p[44]&0x40 == 0 {
			return unsolicitedNA
		}
	}
	return notNotification
}
