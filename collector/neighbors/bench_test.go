package neighbors

import "testing"

// A switch's typical LLDP frame: ids, TTL, names, a management address,
// VLANs, link aggregation, MAC/PHY and maximum frame size.
func benchFrame() []byte {
	return lldpFrame(tChassisMAC, tPortName, tTTL120,
		tlv(tlvSysName, []byte("leaf1.dc1.example.net")...),
		tlv(tlvSysDescr, []byte("Arista Networks EOS version 4.31.2F running on an Arista Networks DCS-7050SX3-48YC8")...),
		tlv(tlvPortDescr, []byte("server-17 bond0 port 1")...),
		tlv(tlvMgmtAddr, 5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 1, 0),
		org(oui8021, dot1PortVLAN, 0, 10),
		org(oui8021, dot1VLANName, append([]byte{0, 10, 7}, "servers"...)...),
		org(oui8021, dot1LinkAgg, 3, 0, 0, 0x03, 0xe8),
		org(oui8023, dot3MACPHY, 3, 0x6c, 0x01, 0, 30),
		org(oui8023, dot3MaxFrameSize, 0x24, 0x00),
		tEnd)
}

func BenchmarkDecodeLLDP(b *testing.B) {
	f := benchFrame()
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTableFrameAndNeighbor(b *testing.B) {
	f := benchFrame()
	tb := newTable(nil)
	var n Neighbor
	b.ReportAllocs()
	for b.Loop() {
		tb.frame("eth0", f)
		if !tb.CopyNeighbor("eth0", tb.clock(), &n) {
			b.Fatal("no neighbour")
		}
	}
}
