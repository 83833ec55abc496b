package neighbors

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// LACPDU is what one received LACPDU says (IEEE 802.1AX): the sender's
// own port (Actor) and the sender's view of our port (Partner), which a
// healthy partner copies from our LACPDUs.
type LACPDU struct {
	Actor   LACPPort `json:"actor"`
	Partner LACPPort `json:"partner"`
}

// LACPPort is one side's port information in an LACPDU.
type LACPPort struct {
	SystemPriority int    `json:"system_priority"`
	SystemMAC      string `json:"system_mac"`
	Key            int    `json:"key"`
	PortPriority   int    `json:"port_priority"`
	Port           int    `json:"port"`
	State          uint8  `json:"state"`
}

const (
	slowSubtypeLACP = 1
	lacpInfoLen     = 20 // actor and partner information TLVs
)

// DecodeLACPDU reads an Ethernet frame carrying an LACPDU (a slow
// protocol frame of subtype 1). Markers and other slow protocols are
// ErrNotNeighbor; a truncated LACPDU is an error.
func DecodeLACPDU(frame []byte) (*LACPDU, error) {
	if len(frame) < 16 || binary.BigEndian.Uint16(frame[12:]) != EtherTypeSlow || frame[14] != slowSubtypeLACP {
		return nil, ErrNotNeighbor
	}
	b := frame[16:] // after subtype and version
	var pdu LACPDU
	for _, want := range []struct {
		typ  byte
		port *LACPPort
	}{{1, &pdu.Actor}, {2, &pdu.Partner}} {
		if len(b) < lacpInfoLen {
			return nil, errors.New("LACPDU truncated")
		}
		if b[0] != want.typ || b[1] != lacpInfoLen {
			return nil, fmt.Errorf("LACPDU TLV type %d length %d where information TLV %d belongs", b[0], b[1], want.typ)
		}
		*want.port = LACPPort{
			SystemPriority: int(binary.BigEndian.Uint16(b[2:])),
			SystemMAC:      macText(b[4:10]),
			Key:            int(binary.BigEndian.Uint16(b[10:])),
			PortPriority:   int(binary.BigEndian.Uint16(b[12:])),
			Port:           int(binary.BigEndian.Uint16(b[14:])),
			State:          b[16],
		}
		b = b[lacpInfoLen:]
	}
	return &pdu, nil
}
