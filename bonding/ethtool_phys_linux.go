package bonding

import (
	"encoding/binary"
	"strconv"

	"golang.org/x/sys/unix"
)

// Attributes of ethtool's generic netlink messages (uapi
// ethtool_netlink.h): those golang.org/x/sys/unix names, and the FEC and
// module EEPROM ones it does not.
const (
	ethtoolHeaderDevName = unix.ETHTOOL_A_HEADER_DEV_NAME
	ethtoolHeaderFlags   = unix.ETHTOOL_A_HEADER_FLAGS
	ethtoolFlagCompact   = unix.ETHTOOL_FLAG_COMPACT_BITSETS
	ethtoolFlagStats     = unix.ETHTOOL_FLAG_STATS

	linkstateLink        = unix.ETHTOOL_A_LINKSTATE_LINK
	linkstateExtState    = unix.ETHTOOL_A_LINKSTATE_EXT_STATE
	linkstateExtSubstate = unix.ETHTOOL_A_LINKSTATE_EXT_SUBSTATE
	linkstateExtDownCnt  = unix.ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT

	bitsetNoMask = unix.ETHTOOL_A_BITSET_NOMASK
	bitsetBits   = unix.ETHTOOL_A_BITSET_BITS
	bitsetValue  = unix.ETHTOOL_A_BITSET_VALUE
	bitsBit      = unix.ETHTOOL_A_BITSET_BITS_BIT
	bitIndex     = unix.ETHTOOL_A_BITSET_BIT_INDEX
	bitValue     = unix.ETHTOOL_A_BITSET_BIT_VALUE

	// ETHTOOL_A_FEC_*, ETHTOOL_A_FEC_STAT_*.
	fecModes  = 2
	fecAuto   = 3
	fecActive = 4
	fecStats  = 5

	fecStatCorrected = 2
	fecStatUncorr    = 3
	fecStatCorrBits  = 4

	// ETHTOOL_A_MODULE_EEPROM_*.
	moduleEEPROMOffset  = 2
	moduleEEPROMLength  = 3
	moduleEEPROMPage    = 4
	moduleEEPROMBank    = 5
	moduleEEPROMI2CAddr = 6
	moduleEEPROMData    = 7
)

// Generic netlink commands of the "ethtool" family.
const (
	EthtoolMsgLinkStateGet    = unix.ETHTOOL_MSG_LINKSTATE_GET
	EthtoolMsgFECGet          = unix.ETHTOOL_MSG_FEC_GET
	EthtoolMsgModuleEEPROMGet = unix.ETHTOOL_MSG_MODULE_EEPROM_GET
)

// attr appends one netlink attribute (4-byte aligned).
func attr(b []byte, typ uint16, val []byte) []byte {
	l := 4 + len(val)
	b = binary.NativeEndian.AppendUint16(b, uint16(l))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, val...)
	for range (4 - l%4) % 4 {
		b = append(b, 0)
	}
	return b
}

func u32Bytes(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

// ethtoolHeader is the request header nest (attribute 1 of every
// command): the interface's name and flags.
func ethtoolHeader(name string, flags uint32) []byte {
	var h []byte
	h = attr(h, ethtoolHeaderDevName, append([]byte(name), 0))
	h = attr(h, ethtoolHeaderFlags, u32Bytes(flags))
	return attr(nil, 1|nlaFNested, h)
}

const nlaFNested = unix.NLA_F_NESTED

// EthtoolLinkStateRequest is the body of a LINKSTATE_GET request.
func EthtoolLinkStateRequest(name string) []byte { return ethtoolHeader(name, 0) }

// EthtoolFECRequest is the body of a FEC_GET request asking for the
// driver's FEC statistics too.
func EthtoolFECRequest(name string) []byte {
	return ethtoolHeader(name, ethtoolFlagCompact|ethtoolFlagStats)
}

// EthtoolModuleEEPROMRequest is the body of a MODULE_EEPROM_GET request
// for length bytes at offset of page (and bank) at the i2c address.
func EthtoolModuleEEPROMRequest(name string, i2c, page, bank uint8, offset, length int) []byte {
	b := ethtoolHeader(name, 0)
	b = attr(b, moduleEEPROMOffset, u32Bytes(uint32(offset)))
	b = attr(b, moduleEEPROMLength, u32Bytes(uint32(length)))
	b = attr(b, moduleEEPROMPage, []byte{page})
	b = attr(b, moduleEEPROMBank, []byte{bank})
	b = attr(b, moduleEEPROMI2CAddr, []byte{i2c})
	return b
}

// ParseEthtoolLinkState decodes a LINKSTATE_GET reply's attributes.
func ParseEthtoolLinkState(b []byte) LinkState {
	var ls LinkState
	var ext, sub *uint8
	walkAttrs(b, func(typ uint16, val []byte) bool {
		switch {
		case typ == linkstateLink && len(val) >= 1:
			up := val[0] != 0
			ls.Detected = &up
		case typ == linkstateExtState && len(val) >= 1:
			ext = &val[0]
		case typ == linkstateExtSubstate && len(val) >= 1:
			sub = &val[0]
		case typ == linkstateExtDownCnt && len(val) >= 4:
			n := binary.NativeEndian.Uint32(val)
			ls.DownEvents = &n
		}
		return true
	})
	if ext != nil {
		if int(*ext) < len(linkExtStates) {
			ls.ExtState = linkExtStates[*ext]
		} else {
			ls.ExtState = "unknown_" + strconv.Itoa(int(*ext))
		}
		if sub != nil && *sub != 0 {
			names := linkExtSubstates[ls.ExtState]
			if int(*sub) < len(names) {
				ls.ExtSubstate = names[*sub]
			} else {
				ls.ExtSubstate = "unknown_" + strconv.Itoa(int(*sub))
			}
		}
	}
	return ls
}

// ParseEthtoolFEC decodes a FEC_GET reply's attributes. A statistic the
// driver does not keep is absent from the reply and nil here; each
// statistic is the total followed by per-lane values, of which only the
// total is kept.
func ParseEthtoolFEC(b []byte) FEC {
	var f FEC
	var auto bool
	var modes []uint32
	walkAttrs(b, func(typ uint16, val []byte) bool {
		switch typ {
		case fecModes:
			modes = bitsetBitsOn(val)
		case fecAuto:
			auto = len(val) >= 1 && val[0] != 0
		case fecActive:
			if len(val) >= 4 {
				f.Active = fecModeName(binary.NativeEndian.Uint32(val))
			}
		case fecStats:
			walkAttrs(val, func(typ uint16, val []byte) bool {
				if len(val) < 8 {
					return true
				}
				total := binary.NativeEndian.Uint64(val)
				switch typ {
				case fecStatCorrected:
					f.Corrected = &total
				case fecStatUncorr:
					f.Uncorrectable = &total
				case fecStatCorrBits:
					f.CorrectedBits = &total
				}
				return true
			})
		}
		return true
	})
	f.Configured = []string{}
	if auto {
		f.Configured = append(f.Configured, "Auto")
	}
	for _, m := range fecModeBits {
		for _, bit := range modes {
			if bit == m.bit {
				f.Configured = append(f.Configured, m.name)
			}
		}
	}
	return f
}

// bitsetBitsOn lists the set bits of an ethtool bitset, compact (VALUE:
// u32 words) or verbose (BITS: one nest per bit with its INDEX; in a list,
// flagged NOMASK, every named bit is set, otherwise those with VALUE).
func bitsetBitsOn(b []byte) []uint32 {
	var on, flagged, listed []uint32
	list := false
	walkAttrs(b, func(typ uint16, val []byte) bool {
		switch typ {
		case bitsetNoMask:
			list = true
		case bitsetValue:
			for w := 0; w+4 <= len(val) && w < 64; w += 4 {
				word := binary.NativeEndian.Uint32(val[w:])
				for i := range uint32(32) {
					if word&(1<<i) != 0 {
						on = append(on, uint32(w/4)*32+i)
					}
				}
			}
		case bitsetBits:
			walkAttrs(val, func(typ uint16, val []byte) bool {
				if typ != bitsBit {
					return true
				}
				var idx *uint32
				set := false
				walkAttrs(val, func(typ uint16, val []byte) bool {
					switch {
					case typ == bitIndex && len(val) >= 4:
						i := binary.NativeEndian.Uint32(val)
						idx = &i
					case typ == bitValue:
						set = true
					}
					return true
				})
				if idx != nil {
					listed = append(listed, *idx)
					if set {
						flagged = append(flagged, *idx)
					}
				}
				return true
			})
		}
		return true
	})
	if list {
		return append(on, listed...)
	}
	return append(on, flagged...)
}

// ParseEthtoolModuleEEPROM returns the data of a MODULE_EEPROM_GET reply.
func ParseEthtoolModuleEEPROM(b []byte) (data []byte, ok bool) {
	walkAttrs(b, func(typ uint16, val []byte) bool {
		if typ == moduleEEPROMData {
			data, ok = val, true
			return false
		}
		return true
	})
	return data, ok
}

// linkExtStates names enum ethtool_link_ext_state (uapi ethtool.h).
var linkExtStates = []string{"autoneg", "link_training_failure", "link_logical_mismatch",
	"bad_signal_integrity", "no_cable", "cable_issue", "eeprom_issue", "calibration_failure",
	"power_budget_exceeded", "overheat", "module"}

// linkExtSubstates names the substates of each state that has them
// (enum ethtool_link_ext_substate_*; substate 0 is unset).
var linkExtSubstates = map[string][]string{
	"autoneg": {"", "no_partner_detected", "ack_not_received", "next_page_exchange_failed",
		"no_partner_detected_force_mode", "fec_mismatch_during_override", "no_hcd"},
	"link_training_failure": {"", "kr_frame_lock_not_acquired", "kr_link_inhibit_timeout",
		"kr_link_partner_did_not_set_receiver_ready", "remote_fault"},
	"link_logical_mismatch": {"", "pcs_did_not_acquire_block_lock", "pcs_did_not_acquire_am_lock",
		"pcs_did_not_get_align_status", "fc_fec_is_not_locked", "rs_fec_is_not_locked"},
	"bad_signal_integrity": {"", "large_number_of_physical_errors", "unsupported_rate",
		"serdes_reference_clock_lost", "serdes_alos"},
	"cable_issue": {"", "unsupported_cable", "cable_test_failure"},
	"module":      {"", "cmis_not_ready"},
}

// Link mode bits of the FEC encodings (enum ethtool_link_mode_bit_indices)
// and the names `ethtool --show-fec` gives them.
var fecModeBits = []struct {
	bit  uint32
	name string
}{{49, "Off"}, {50, "RS"}, {51, "BaseR"}, {74, "LLRS"}}

func fecModeName(bit uint32) string {
	for _, m := range fecModeBits {
		if m.bit == bit {
			return m.name
		}
	}
	return ""
}
