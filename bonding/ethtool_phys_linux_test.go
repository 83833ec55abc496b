package bonding

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"slices"
	"testing"
)

func u64Bytes(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.NativeEndian.AppendUint64(b, v)
	}
	return b
}

func nest(typ uint16, parts ...[]byte) []byte {
	return attr(nil, typ|nlaFNested, bytes.Join(parts, nil))
}

// Replies laid out as uapi ethtool_netlink.h says: LINKSTATE: 2 LINK u8,
// 5 EXT_STATE u8, 6 EXT_SUBSTATE u8, 7 EXT_DOWN_CNT u32.
func TestParseEthtoolLinkState(t *testing.T) {
	hdr := nest(1, attr(nil, 1, u32Bytes(7)))
	for _, c := range []struct {
		name string
		msg  []byte
		want string
	}{
		{"up", slices.Concat(hdr, attr(nil, 2, []byte{1})), `{"detected":true}`},
		{"no cable", slices.Concat(hdr, attr(nil, 2, []byte{0}), attr(nil, 5, []byte{4})), `{"detected":false,"ext_state":"no_cable"}`},
		{"autoneg no partner, 3 downs", slices.Concat(hdr, attr(nil, 2, []byte{0}), attr(nil, 5, []byte{0}), attr(nil, 6, []byte{1}), attr(nil, 7, u32Bytes(3))),
			`{"detected":false,"ext_state":"autoneg","ext_substate":"no_partner_detected","down_events":3}`},
		{"future state", slices.Concat(attr(nil, 2, []byte{0}), attr(nil, 5, []byte{42}), attr(nil, 6, []byte{9})), `{"detected":false,"ext_state":"unknown_42","ext_substate":"unknown_9"}`},
		{"no get_link", hdr, `{"detected":null}`},
	} {
		b, _ := json.Marshal(ParseEthtoolLinkState(c.msg))
		if string(b) != c.want {
			t.Errorf("%s: %s, want %s", c.name, b, c.want)
		}
	}
}

// FEC: 2 MODES bitset, 3 AUTO u8, 4 ACTIVE u32 (a link mode bit: 49
// None, 50 RS, 51 BASER, 74 LLRS), 5 STATS nest of 2 CORRECTED, 3 UNCORR,
// 4 CORR_BITS, each u64 total then per-lane u64s.
func TestParseEthtoolFEC(t *testing.T) {
	words := make([]byte, 12) // 3 u32 words: bits 0-95
	binary.NativeEndian.PutUint32(words[4:], 1<<(50-32)|1<<(51-32))
	compact := nest(2, attr(nil, 2, u32Bytes(96)), attr(nil, 4, words), attr(nil, 1, nil))
	stats := nest(5, attr(nil, 2, u64Bytes(1234, 600, 634)), attr(nil, 3, u64Bytes(7, 3, 4)))
	f := ParseEthtoolFEC(slices.Concat(compact, attr(nil, 3, []byte{1}), attr(nil, 4, u32Bytes(50)), stats))
	b, _ := json.Marshal(f)
	if want := `{"configured":["Auto","RS","BaseR"],"active":"RS","corrected_blocks":1234,"uncorrectable_blocks":7}`; string(b) != want {
		t.Errorf("compact: %s, want %s", b, want)
	}
	// Verbose bitset, a list (NOMASK): every named bit is set.
	bit := func(i uint32) []byte { return nest(1, attr(nil, 1, u32Bytes(i))) }
	verbose := nest(2, attr(nil, 1, nil), nest(3, bit(49)))
	f = ParseEthtoolFEC(slices.Concat(verbose, attr(nil, 3, []byte{0})))
	b, _ = json.Marshal(f)
	if want := `{"configured":["Off"]}`; string(b) != want {
		t.Errorf("verbose list: %s, want %s", b, want)
	}
	// Verbose with a mask: only bits flagged VALUE are set.
	masked := nest(2, nest(3, bit(50), nest(1, attr(nil, 1, u32Bytes(74)), attr(nil, 3, nil))))
	if got := ParseEthtoolFEC(masked).Configured; !slices.Equal(got, []string{"LLRS"}) {
		t.Errorf("verbose masked: %v", got)
	}
}

func TestEthtoolModuleEEPROMRoundTrip(t *testing.T) {
	req := EthtoolModuleEEPROMRequest("eth3", 0x51, 3, 0, 128, 128)
	var name string
	var off, length uint32
	var page, i2c uint8 = 255, 0
	walkAttrs(req, func(typ uint16, val []byte) bool {
		switch typ {
		case 1:
			walkAttrs(val, func(typ uint16, val []byte) bool {
				if typ == ethtoolHeaderDevName {
					name = string(bytes.TrimRight(val, "\x00"))
				}
				return true
			})
		case moduleEEPROMOffset:
			off = binary.NativeEndian.Uint32(val)
		case moduleEEPROMLength:
			length = binary.NativeEndian.Uint32(val)
		case moduleEEPROMPage:
			page = val[0]
		case moduleEEPROMI2CAddr:
			i2c = val[0]
		}
		return true
	})
	if name != "eth3" || off != 128 || length != 128 || page != 3 || i2c != 0x51 {
		t.Errorf("request decodes to %q %d %d %d %#x", name, off, length, page, i2c)
	}
	data := bytes.Repeat([]byte{0xAB}, 128)
	got, ok := ParseEthtoolModuleEEPROM(slices.Concat(nest(1), attr(nil, moduleEEPROMData, data)))
	if !ok || !bytes.Equal(got, data) {
		t.Errorf("data %v %x", ok, got)
	}
	if _, ok := ParseEthtoolModuleEEPROM(nest(1)); ok {
		t.Error("data found in a reply without it")
	}
}

// FuzzParseEthtool feeds arbitrary attributes to the three reply parsers:
// no panic, and what they return encodes as JSON.
func FuzzParseEthtool(f *testing.F) {
	f.Add(slices.Concat(attr(nil, 2, []byte{0}), attr(nil, 5, []byte{0}), attr(nil, 6, []byte{1})))
	f.Add(nest(2, attr(nil, 4, make([]byte, 12))))
	f.Add(nest(5, attr(nil, 2, u64Bytes(1, 2))))
	f.Fuzz(func(t *testing.T, b []byte) {
		ls := ParseEthtoolLinkState(b)
		fec := ParseEthtoolFEC(b)
		ParseEthtoolModuleEEPROM(b)
		if _, err := json.Marshal([]any{ls, fec}); err != nil {
			t.Fatal(err)
		}
	})
}
