package flowmeter

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/bondtop/bondtop/bonding"
)

// The flows and hash values of bonding's hand-worked vectors
// (bonding/hash_test.go, TestHashVectors, Linux 6.1, little-endian): a
// frame built from each flow, read by the meter's parser and turned back
// into the hash's input by Flow.Packet, must hash to the same value.

var (
	vecSrcMAC = [6]byte{0x52, 0x54, 0x00, 0x12, 0x34, 0x05}
	vecDstMAC = [6]byte{0x52, 0x54, 0x00, 0xab, 0xcd, 0x0a}
	linux61   = bonding.KernelVersion{Major: 6, Minor: 1}
)

func vip(s string) netip.Addr { return netip.MustParseAddr(s) }

type hashVector struct {
	name   string
	policy bonding.Policy
	flow   bonding.Flow
	tpid   uint16 // the tag rides in the frame
	want   uint32
}

func hashVectors() []hashVector {
	udp4 := bonding.Flow{SrcMAC: vecSrcMAC, DstMAC: vecDstMAC, Src: vip("10.0.0.1"), Dst: vip("10.0.0.2"), Proto: bonding.ProtoUDP, SrcPort: 1000, DstPort: 53}
	tcp6 := bonding.Flow{SrcMAC: vecSrcMAC, DstMAC: vecDstMAC, Src: vip("2001:db8::1"), Dst: vip("2001:db8::2"), Proto: bonding.ProtoTCP, SrcPort: 40000, DstPort: 443}
	icmpEcho := bonding.Flow{SrcMAC: vecSrcMAC, DstMAC: vecDstMAC, Src: vip("192.168.1.10"), Dst: vip("192.168.1.20"), Proto: bonding.ProtoICMP, ICMPType: 8, ICMPID: 0x1234}
	echo6 := bonding.Flow{SrcMAC: vecSrcMAC, DstMAC: vecDstMAC, Src: vip("2001:db8::1"), Dst: vip("2001:db8::2"), Proto: bonding.ProtoICMPv6, ICMPType: 128, ICMPID: 0x0102}
	unreach6 := bonding.Flow{SrcMAC: vecSrcMAC, DstMAC: vecDstMAC, Src: vip("2001:db8::2"), Dst: vip("2001:db8::1"), Proto: bonding.ProtoICMPv6, ICMPType: 1, ICMPCode: 4,
		Quoted: bonding.Quoted{Src: vip("2001:db8::1"), Dst: vip("2001:db8::2"), Proto: bonding.ProtoUDP, SrcPort: 1000, DstPort: 53}}
	portUnreach := bonding.Flow{SrcMAC: vecSrcMAC, DstMAC: vecDstMAC, Src: vip("10.0.0.2"), Dst: vip("10.0.0.1"), Proto: bonding.ProtoICMP, ICMPType: 3, ICMPCode: 3,
		Quoted: bonding.Quoted{Src: vip("10.0.0.1"), Dst: vip("10.0.0.2"), Proto: bonding.ProtoUDP, SrcPort: 1000, DstPort: 53}}
	timeExceeded := bonding.Flow{SrcMAC: vecSrcMAC, DstMAC: vecDstMAC, Src: vip("10.0.0.1"), Dst: vip("192.0.2.7"), Proto: bonding.ProtoICMP, ICMPType: 11,
		Quoted: bonding.Quoted{Src: vip("192.0.2.7"), Dst: vip("198.51.100.9"), Proto: bonding.ProtoUDP, SrcPort: 33434, DstPort: 33435}}
	frag, frag6 := udp4, tcp6
	frag.Fragment, frag6.Fragment = true, true
	esp := bonding.Flow{SrcMAC: vecSrcMAC, DstMAC: vecDstMAC, Src: vip("10.0.0.1"), Dst: vip("10.0.0.2"), Proto: bonding.ProtoESP, SPI: 0xdeadbeef}
	arp := bonding.Flow{SrcMAC: vecSrcMAC, DstMAC: vecDstMAC, EtherType: bonding.EtherTypeARP}
	lldp := bonding.Flow{SrcMAC: vecSrcMAC, DstMAC: vecDstMAC, EtherType: 0x88cc}
	// In-frame tag: the bond hashes the frame as EtherType 0x8100 by
	// layer2: 0x0a ^ 0x05 ^ 0x8100.
	tagged := udp4
	tagged.VLAN = 100
	return []hashVector{
		{"layer2 ipv4", bonding.PolicyLayer2, udp4, 0, 0x080f},
		{"layer2 ipv6", bonding.PolicyLayer2, tcp6, 0, 0x86d2},
		{"layer2+3 ipv4", bonding.PolicyLayer23, udp4, 0, 0x03030b04},
		{"layer3+4 udp4", bonding.PolicyLayer34, udp4, 0, 0x1b1b6f6e},
		{"layer3+4 tcp6", bonding.PolicyLayer34, tcp6, 0, 0x5c5cfcb2},
		{"layer3+4 icmp echo", bonding.PolicyLayer34, icmpEcho, 0, 0x061c1c18},
		{"layer3+4 icmpv6 echo", bonding.PolicyLayer34, echo6, 0, 0x01000040},
		{"layer3+4 icmpv6 error", bonding.PolicyLayer34, unreach6, 0, 0x1b1b6f6e},
		{"layer3+4 fragment6", bonding.PolicyLayer34, frag6, 0, 0x01818181},
		{"layer3+4 icmp error", bonding.PolicyLayer34, portUnreach, 0, 0x1b1b6f6e},
		{"layer3+4 fragment", bonding.PolicyLayer34, frag, 0, 0x01818181},
		{"layer3+4 esp", bonding.PolicyLayer34, esp, 0, 0x76297f90},
		{"layer3+4 lldp", bonding.PolicyLayer34, lldp, 0, 0x88c3},
		{"layer2+3 icmp error", bonding.PolicyLayer23, timeExceeded, 0, 0x0e68535a},
		{"layer2+3 arp", bonding.PolicyLayer23, arp, 0, 0x0809},
		{"encap3+4 icmp error", bonding.PolicyEncap34, portUnreach, 0, 0x01818181},
		{"encap2+3 arp", bonding.PolicyEncap23, arp, 0, 0x0801},
		{"layer3+4 tag in frame", bonding.PolicyLayer34, tagged, 0x8100, 0x810f},
	}
}

func isLittleEndian() bool {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	return b[0] == 1
}

// flowFromFrame is what the sampled meter makes of a frame.
func flowFromFrame(t testing.TB, fr Frame) Flow {
	t.Helper()
	var f Flow
	if err := ParseFrame(fr, &f.Key, &f.SrcMAC, &f.DstMAC); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPacketHashVectors(t *testing.T) {
	if !isLittleEndian() {
		t.Skip("the vectors are for a little-endian CPU")
	}
	for _, v := range hashVectors() {
		t.Run(v.name, func(t *testing.T) {
			f := flowFromFrame(t, Frame{Data: frameOf(v.flow, v.tpid)})
			p := f.Packet()
			got, err := bonding.Hash(v.policy, &p, linux61)
			if err != nil {
				t.Fatalf("hash of %+v: %v", p, err)
			}
			if got != v.want {
				t.Errorf("hash %#08x, want %#08x (key %+v)", got, v.want, f.Key)
			}
		})
	}
}

// The vlan+srcmac policy sees the offloaded tag, priority bits included:
// 0x525400 ^ 0x123456 ^ (5<<13 | 100) (bonding's "vlan+srcmac priority").
func TestPacketOffloadedTag(t *testing.T) {
	src := [6]byte{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}
	fl := bonding.Flow{SrcMAC: src, DstMAC: vecDstMAC, Src: vip("10.0.0.1"), Dst: vip("10.0.0.2"), Proto: bonding.ProtoUDP, SrcPort: 1, DstPort: 2}
	f := flowFromFrame(t, Frame{Data: frameOf(fl, 0), TagOffloaded: true, VLAN: 5<<13 | 100})
	p := f.Packet()
	if got, err := bonding.Hash(bonding.PolicyVLANSrcMAC, &p, linux61); err != nil || got != 0x40c032 {
		t.Errorf("vlan+srcmac: %#x, %v; want 0x40c032", got, err)
	}
	// The offloaded tag does not hide the IP header from layer3+4.
	if p.EtherType != 0 || p.SrcPort != 1 || p.DstPort != 2 {
		t.Errorf("offloaded tag: packet %+v", p)
	}
}

// Packet maps each Key field to its place in the hash input.
func TestPacketFields(t *testing.T) {
	k := Key{EtherType: 0x0800, Proto: bonding.ProtoAH, Src: vip("10.0.0.1"), Dst: vip("10.0.0.2"), SrcPort: 0xdead, DstPort: 0xbeef}
	if p := (&Flow{Key: k}).Packet(); p.SPI != 0xdeadbeef || p.SrcPort != 0 || p.EtherType != 0 {
		t.Errorf("AH: %+v", p)
	}
	k = Key{EtherType: 0x86DD, Proto: bonding.ProtoICMPv6, Src: vip("::1"), Dst: vip("::2"), ICMPType: 129, ICMPCode: 0, DstPort: 7}
	f := &Flow{Key: k, Counters: Counters{L4Hash: true, SrcMAC: vecSrcMAC, DstMAC: vecDstMAC}}
	if p := f.Packet(); p.ICMPID != 7 || p.ICMPType != 129 || !p.L4Hash || p.SrcMAC != vecSrcMAC || p.DstMAC != vecDstMAC {
		t.Errorf("ICMPv6 echo reply: %+v", p)
	}
	// An IP EtherType whose header could not be read is not IP to the hash.
	if p := (&Flow{Key: Key{EtherType: 0x0800}}).Packet(); p.EtherType != 0x0800 || p.Src.IsValid() {
		t.Errorf("unread IPv4 header: %+v", p)
	}
}

func TestParseFrameShort(t *testing.T) {
	var k Key
	var s, d [6]byte
	if err := ParseFrame(Frame{Data: make([]byte, 13)}, &k, &s, &d); err != ErrShortFrame {
		t.Errorf("13 bytes: %v, want ErrShortFrame", err)
	}
	// A header cut short leaves the fields zero.
	fr := frameOf(bonding.Flow{Src: vip("10.0.0.1"), Dst: vip("10.0.0.2"), Proto: bonding.ProtoTCP, SrcPort: 1, DstPort: 2}, 0)
	if err := ParseFrame(Frame{Data: fr[:30]}, &k, &s, &d); err != nil || k.EtherType != 0x0800 || k.Src.IsValid() {
		t.Errorf("cut IPv4 header: %+v, %v", k, err)
	}
}

func FuzzParseFrame(f *testing.F) {
	for _, v := range hashVectors() {
		f.Add(frameOf(v.flow, v.tpid), false, uint16(0))
	}
	f.Add(make([]byte, 14), true, uint16(100))
	f.Fuzz(func(t *testing.T, b []byte, offloaded bool, tci uint16) {
		var k Key
		var s, d [6]byte
		err := ParseFrame(Frame{Data: b, TagOffloaded: offloaded, VLAN: tci}, &k, &s, &d)
		if (err != nil) != (len(b) < 14) {
			t.Fatalf("%d bytes: err %v", len(b), err)
		}
		if k.Src.IsValid() != k.Dst.IsValid() || (k.Src.IsValid() && k.Src.Is4() != (k.EtherType == 0x0800)) {
			t.Fatalf("addresses %v %v for EtherType %#x", k.Src, k.Dst, k.EtherType)
		}
		if k.Quoted.Src.IsValid() && k.Quoted.Src.Is4() != k.Src.Is4() {
			t.Fatalf("quoted family differs: %+v", k)
		}
		// Whatever the parser makes of it, the hash must take it.
		p := (&Flow{Key: k}).Packet()
		for pol := bonding.PolicyLayer2; pol <= bonding.PolicyVLANSrcMAC; pol++ {
			_, err := bonding.Hash(pol, &p, linux61)
			if err == bonding.ErrFlowAddresses && !k.Src.IsValid() {
				// An 802.3 length of 0, or an IP EtherType without a
				// readable header (the kernel falls back to layer2):
				// not describable, refused.
				continue
			}
			if err != nil && err != bonding.ErrL4Hash && err != bonding.ErrEncapProto && err != bonding.ErrFlowQuoted {
				t.Fatalf("%v of %+v: %v", pol, p, err)
			}
		}
	})
}
