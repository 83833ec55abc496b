package neighbors

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/bpf"
)

// lldpFrame builds an LLDP frame from TLVs (type, value).
func lldpFrame(tlvs ...[]byte) []byte {
	f := []byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x02, 0, 0, 0, 0, 1, 0x88, 0xcc}
	for _, t := range tlvs {
		f = append(f, t...)
	}
	return f
}

func tlv(typ int, v ...byte) []byte {
	h := uint16(typ)<<9 | uint16(len(v))
	return append(binary.BigEndian.AppendUint16(nil, h), v...)
}

func org(oui [3]byte, sub byte, v ...byte) []byte {
	return tlv(tlvOrgSpecific, append([]byte{oui[0], oui[1], oui[2], sub}, v...)...)
}

var (
	tChassisMAC = tlv(tlvChassisID, 4, 0x00, 0x1c, 0x73, 0x01, 0x02, 0x03)
	tPortName   = tlv(tlvPortID, append([]byte{5}, "Ethernet7"...)...)
	tTTL120     = tlv(tlvTTL, 0, 120)
	tEnd        = tlv(tlvEnd)
)

func TestDecodeLLDPSwitchTLVs(t *testing.T) {
	f := lldpFrame(tChassisMAC, tPortName, tTTL120,
		tlv(tlvSysName, []byte("leaf1\n")...),
		tlv(tlvMgmtAddr, 5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 1, 0),
		org(oui8021, dot1PortVLAN, 0, 10),
		org(oui8021, dot1VLANName, append([]byte{0, 10, 5}, "users"...)...),
		org(oui8021, dot1VLANName, append([]byte{0, 20, 3}, "san"...)...),
		org(oui8021, dot1LinkAgg, 3, 0, 0, 0x01, 0xf4),
		org(oui8023, dot3MACPHY, 3, 0x6c, 0x01, 0, 30),
		org(oui8023, dot3MaxFrameSize, 0x05, 0xf2),
		org([3]byte{0x00, 0x01, 0x42}, 1, 1, 2, 3), // unknown organisation
		tEnd, []byte{0xff, 0xff}) // after End: ignored
	n, err := Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if n.ChassisID != "00:1c:73:01:02:03" || n.ChassisIDSubtype != "mac" || n.PortID != "Ethernet7" || n.PortIDSubtype != "ifname" || n.TTLSeconds != 120 {
		t.Errorf("ids: %+v", n)
	}
	if n.SystemName == nil || *n.SystemName != "leaf1" {
		t.Errorf("system name %v: control characters and trailing blanks belong out", n.SystemName)
	}
	if strings.Join(n.ManagementAddresses, ",") != "10.0.0.1" {
		t.Errorf("management %v", n.ManagementAddresses)
	}
	if n.PortVLANID == nil || *n.PortVLANID != 10 || len(n.VLANs) != 2 || n.VLANs[1] != (VLAN{20, "san"}) {
		t.Errorf("VLANs: pvid %v, %v", n.PortVLANID, n.VLANs)
	}
	if a := n.Aggregation; a == nil || !a.Capable || !a.Enabled || a.PortID == nil || *a.PortID != 500 {
		t.Errorf("aggregation %+v", n.Aggregation)
	}
	if n.Autoneg == nil || !n.Autoneg.Supported || !n.Autoneg.Enabled || n.MAUType == nil || MAUName(*n.MAUType) != "1000BaseTFD" {
		t.Errorf("MAC/PHY: %+v %v", n.Autoneg, n.MAUType)
	}
	if n.MaxFrameSize == nil || *n.MaxFrameSize != 1522 {
		t.Errorf("max frame size %v", n.MaxFrameSize)
	}
}

func TestDecodeLLDPDot3AggregationNotEnabled(t *testing.T) {
	n, err := Decode(lldpFrame(tChassisMAC, tPortName, tTTL120, org(oui8023, dot3LinkAgg, 1, 0, 0, 0, 0), tEnd))
	if err != nil {
		t.Fatal(err)
	}
	if a := n.Aggregation; a == nil || !a.Capable || a.Enabled || a.PortID != nil {
		t.Errorf("aggregation %+v", n.Aggregation)
	}
}

func TestDecodeErrors(t *testing.T) {
	for name, c := range map[string]struct {
		frame []byte
		want  string
	}{
		"short":          {[]byte{1, 2, 3}, "shorter than an Ethernet header"},
		"IPv4":           {append(make([]byte, 12), 0x08, 0x00, 0x45), "not an LLDP or CDP frame"},
		"TLV overruns":   {lldpFrame(tChassisMAC, []byte{0x04, 0x10, 'x'}), "claims 16 bytes"},
		"TTL missing":    {lldpFrame(tChassisMAC, tPortName, tEnd), "mandatory TLV 3"},
		"order":          {lldpFrame(tPortName, tChassisMAC, tTTL120), "mandatory TLV 1"},
		"no TLVs":        {lldpFrame(), "lacks its chassis id"},
		"empty chassis":  {lldpFrame(tlv(tlvChassisID, 4)), "chassis id empty"},
		"CDP bad length": {cdpFrame(2, 180, []byte{0, 1, 0, 99, 'x'}), "claims 99 bytes"},
		"CDP no device":  {cdpFrame(2, 180), "lacks a device id"},
		"CDP version":    {cdpFrame(7, 180), "version 7"},
	} {
		_, err := Decode(c.frame)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.want)
		}
	}
}

func TestDecodeShutdownAndTable(t *testing.T) {
	now := time.Unix(1000, 0)
	tb := newTable(func() time.Time { return now })
	tb.frame("eth1", lldpFrame(tChassisMAC, tPortName, tlv(tlvTTL, 0, 5), tEnd))
	if n := neighborOf(tb, "eth1"); n == nil || n.AgeSeconds != 0 {
		t.Fatalf("fresh neighbour %+v", n)
	}
	now = now.Add(4 * time.Second)
	if n := neighborOf(tb, "eth1"); n == nil || n.AgeSeconds != 4 {
		t.Fatalf("4 s old neighbour with TTL 5: %+v", n)
	}
	now = now.Add(2 * time.Second)
	if n := neighborOf(tb, "eth1"); n != nil {
		t.Fatalf("neighbour kept past its TTL: %+v", n)
	}
	tb.frame("eth1", lldpFrame(tChassisMAC, tPortName, tTTL120, tEnd))
	tb.frame("eth1", cdpFrame(2, 180, cdpTLV(cdpDeviceID, []byte("sw9")...)))
	if n := neighborOf(tb, "eth1"); n == nil || n.Protocol != ProtoLLDP {
		t.Fatalf("LLDP wins over CDP: %+v", n)
	}
	tb.frame("eth1", lldpFrame(tChassisMAC, tPortName, tlv(tlvTTL, 0, 0), tEnd)) // shutdown
	if n := neighborOf(tb, "eth1"); n == nil || n.Protocol != ProtoCDP {
		t.Fatalf("after the LLDP shutdown the CDP neighbour remains: %+v", n)
	}
	if _, ok := tb.LACPDUAge("eth1", tb.clock()); ok {
		t.Fatal("a LACPDU age before any LACPDU")
	}
	tb.frame("eth1", append(make([]byte, 12), 0x88, 0x09, 1, 1))
	now = now.Add(1500 * time.Millisecond)
	if age, ok := tb.LACPDUAge("eth1", tb.clock()); !ok || age != 1500*time.Millisecond {
		t.Fatalf("LACPDU age %v %v", age, ok)
	}
}

func cdpTLV(typ uint16, v ...byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(4+len(v)))
	return append(b, v...)
}

func cdpFrame(version, ttl byte, tlvs ...[]byte) []byte {
	body := append([]byte{}, cdpSNAP[:]...)
	body = append(body, 0x20, 0x00, version, ttl, 0, 0)
	for _, t := range tlvs {
		body = append(body, t...)
	}
	f := append([]byte{}, cdpDst[:]...)
	f = append(f, 0x02, 0, 0, 0, 0, 1)
	f = binary.BigEndian.AppendUint16(f, uint16(len(body)))
	f = append(f, body...)
	return append(f, make([]byte, 10)...) // padding past the 802.3 length
}

func TestDecodeCDP(t *testing.T) {
	addrs := []byte{0, 0, 0, 2, 1, 1, 0xcc, 0, 4, 10, 1, 2, 3,
		2, 8, 0xaa, 0xaa, 0x03, 0, 0, 0, 0x86, 0xdd, 0, 16, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	f := cdpFrame(2, 180,
		cdpTLV(cdpDeviceID, []byte("core1.example")...),
		cdpTLV(cdpAddresses, addrs...),
		cdpTLV(cdpPortID, []byte("TenGigabitEthernet1/0/3")...),
		cdpTLV(cdpSoftware, []byte("Cisco IOS XE 17.9")...),
		cdpTLV(cdpPlatform, []byte("cisco C9300-48P")...),
		cdpTLV(cdpNativeVLAN, 0, 30),
		cdpTLV(cdpMTU, 0, 0, 0x23, 0x28),
		cdpTLV(cdpMgmtAddress, addrs[:13]...))
	n, err := Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if n.Protocol != ProtoCDP || n.ChassisID != "core1.example" || *n.SystemName != "core1.example" || n.PortID != "TenGigabitEthernet1/0/3" || n.TTLSeconds != 180 {
		t.Errorf("ids: %+v", n)
	}
	if *n.SystemDescription != "Cisco IOS XE 17.9" || *n.Platform != "cisco C9300-48P" {
		t.Errorf("descriptions %q %q", *n.SystemDescription, *n.Platform)
	}
	if strings.Join(n.ManagementAddresses, ",") != "10.1.2.3,2001:db8::1" {
		t.Errorf("addresses %v (duplicates belong out)", n.ManagementAddresses)
	}
	if *n.PortVLANID != 30 || *n.MaxFrameSize != 9018 {
		t.Errorf("native VLAN %d, max frame %d (MTU 9000 + 18)", *n.PortVLANID, *n.MaxFrameSize)
	}
}

// TestFilter runs the socket's classic BPF program in x/net/bpf's VM.
func TestFilter(t *testing.T) {
	vm, err := bpf.NewVM(Filter())
	if err != nil {
		t.Fatal(err)
	}
	ipv4 := append(make([]byte, 12), 0x08, 0x00, 0x45, 0, 0, 0, 0, 0, 0, 0)
	cdpWrongPID := cdpFrame(2, 180)
	cdpWrongPID[21] = 0x01
	stp := cdpFrame(2, 180)
	copy(stp, []byte{0x01, 0x80, 0xc2, 0, 0, 0})
	for name, c := range map[string]struct {
		frame []byte
		keep  bool
	}{
		"LLDP":          {lldpFrame(tChassisMAC, tPortName, tTTL120, tEnd), true},
		"LACPDU":        {append(make([]byte, 12), 0x88, 0x09, 1, 1), true},
		"CDP":           {cdpFrame(2, 180), true},
		"IPv4":          {ipv4, false},
		"CDP wrong PID": {cdpWrongPID, false},
		"802.3 not CDP": {stp, false},
		"truncated CDP": {cdpFrame(2, 180)[:17], false},
	} {
		n, err := vm.Run(c.frame)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if (n > 0) != c.keep {
			t.Errorf("%s: filter returned %d, keep=%v", name, n, c.keep)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(lldpFrame(tChassisMAC, tPortName, tTTL120, org(oui8021, dot1VLANName, 0, 10, 5, 'u'), tEnd))
	f.Add(lldpFrame(tChassisMAC, tPortName, tTTL120, tlv(tlvMgmtAddr, 17, 2), org(oui8023, dot3MACPHY, 3)))
	f.Add(cdpFrame(2, 180, cdpTLV(cdpDeviceID, 's'), cdpTLV(cdpAddresses, 0, 0, 0, 9, 1, 1, 0xcc, 0, 4)))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := Decode(b)
		if (n == nil) == (err == nil) {
			t.Fatalf("neighbour %v with error %v", n, err)
		}
		if n == nil {
			return
		}
		for _, s := range []string{n.ChassisID, n.PortID} {
			if strings.ContainsAny(s, "\n\r\x00") {
				t.Fatalf("control character in %q", s)
			}
		}
	})
}

// lacpduFrame is an LACPDU from partner system 02:bb.. port 7 key 9 whose
// view of us is system 02:aa.. port 3 key 15.
func lacpduFrame() []byte {
	f := []byte{0x01, 0x80, 0xc2, 0, 0, 0x02, 0x02, 0xbb, 0, 0, 0, 1, 0x88, 0x09, 1, 1}
	f = append(f, 1, 20, 0x80, 0, 0x02, 0xbb, 0, 0, 0, 1, 0, 9, 0, 0xff, 0, 7, 0x3f, 0, 0, 0)
	f = append(f, 2, 20, 0xff, 0xff, 0x02, 0xaa, 0, 0, 0, 1, 0, 15, 0, 0xff, 0, 3, 0x3d, 0, 0, 0)
	f = append(f, 3, 16, 0, 0)
	return append(f, make([]byte, 64)...)
}

func TestDecodeLACPDU(t *testing.T) {
	pdu, err := DecodeLACPDU(lacpduFrame())
	if err != nil {
		t.Fatal(err)
	}
	want := LACPDU{
		Actor:   LACPPort{SystemPriority: 0x8000, SystemMAC: "02:bb:00:00:00:01", Key: 9, PortPriority: 255, Port: 7, State: 0x3f},
		Partner: LACPPort{SystemPriority: 0xffff, SystemMAC: "02:aa:00:00:00:01", Key: 15, PortPriority: 255, Port: 3, State: 0x3d},
	}
	if *pdu != want {
		t.Errorf("got %+v\nwant %+v", *pdu, want)
	}
	marker := lacpduFrame()
	marker[14] = 2
	if _, err := DecodeLACPDU(marker); err != ErrNotNeighbor {
		t.Errorf("a marker: %v", err)
	}
	if _, err := DecodeLACPDU(lacpduFrame()[:40]); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("a truncated LACPDU: %v", err)
	}
	tb := newTable(nil)
	tb.frame("eth0", lacpduFrame())
	var got LACPDU
	if !tb.CopyLACPDU("eth0", &got) || got.Partner.Port != 3 {
		t.Errorf("table keeps %+v", got)
	}
}

func FuzzDecodeLACPDU(f *testing.F) {
	f.Add(lacpduFrame())
	f.Fuzz(func(t *testing.T, b []byte) {
		pdu, err := DecodeLACPDU(b)
		if (pdu == nil) == (err == nil) {
			t.Fatalf("%v with %v", pdu, err)
		}
	})
}

// neighborOf is the slave's neighbour as CopyNeighbor gives it, nil when
// none.
func neighborOf(tb *table, slave string) *Neighbor {
	var n Neighbor
	if !tb.CopyNeighbor(slave, tb.clock(), &n) {
		return nil
	}
	return &n
}
