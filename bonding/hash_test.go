package bonding

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"testing/fstest"
	"time"
)

// The vectors below were worked out by hand from bond_main.c and
// flow_dissector.c, step by step in the comments, for a little-endian CPU
// (x86-64, arm64: the lab and our hosts). LE(a b c d) is the u32 whose
// memory holds the bytes a b c d, i.e. 0xdcba.

var (
	linux61   = KernelVersion{6, 1, 0}
	linux510  = KernelVersion{5, 10, 0}
	linux5102 = KernelVersion{5, 10, 26} // before the ICMP id byte-order fix
	linux54   = KernelVersion{5, 4, 0}   // before ICMP hashing
	linux5137 = KernelVersion{5, 15, 37} // host-order EtherType, still >>1 for all
	linux5138 = KernelVersion{5, 15, 38} // >>1 for layer3+4 only
)

// macs: source ..:05 (the bond), destination ..:0a (the peer).
var srcMAC, dstMAC = [6]byte{0x52, 0x54, 0x00, 0x12, 0x34, 0x05}, [6]byte{0x52, 0x54, 0x00, 0xab, 0xcd, 0x0a}

func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

// udp4 is 10.0.0.1:1000 -> 10.0.0.2:53.
func udp4() Flow {
	return Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Src: ip("10.0.0.1"), Dst: ip("10.0.0.2"), Proto: ProtoUDP, SrcPort: 1000, DstPort: 53}
}

func isLittleEndian() bool {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	return b[0] == 1
}

func TestHashVectors(t *testing.T) {
	if !isLittleEndian() {
		t.Skip("the vectors are for a little-endian CPU")
	}
	icmpEcho := Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Src: ip("192.168.1.10"), Dst: ip("192.168.1.20"), Proto: ProtoICMP, ICMPType: 8, ICMPID: 0x1234}
	icmpEchoID0 := icmpEcho
	icmpEchoID0.ICMPID = 0
	// We (10.0.0.2) tell 10.0.0.1 that port 53 is closed: the error quotes
	// 10.0.0.1:1000 -> 10.0.0.2:53.
	portUnreach := Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Src: ip("10.0.0.2"), Dst: ip("10.0.0.1"), Proto: ProtoICMP, ICMPType: 3, ICMPCode: 3,
		Quoted: Quoted{Src: ip("10.0.0.1"), Dst: ip("10.0.0.2"), Proto: ProtoUDP, SrcPort: 1000, DstPort: 53}}
	// As a router (10.0.0.1), time exceeded for 192.0.2.7 -> 198.51.100.9.
	timeExceeded := Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Src: ip("10.0.0.1"), Dst: ip("192.0.2.7"), Proto: ProtoICMP, ICMPType: 11,
		Quoted: Quoted{Src: ip("192.0.2.7"), Dst: ip("198.51.100.9"), Proto: ProtoUDP, SrcPort: 33434, DstPort: 33435}}
	frag := udp4()
	frag.Fragment = true
	esp := Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Src: ip("10.0.0.1"), Dst: ip("10.0.0.2"), Proto: ProtoESP, SPI: 0xdeadbeef}
	tcp6 := Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Src: ip("2001:db8::1"), Dst: ip("2001:db8::2"), Proto: ProtoTCP, SrcPort: 40000, DstPort: 443}
	echo6 := Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Src: ip("2001:db8::1"), Dst: ip("2001:db8::2"), Proto: ProtoICMPv6, ICMPType: 128, ICMPID: 0x0102}
	frag6 := tcp6
	frag6.Fragment = true
	unreach6 := Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Src: ip("2001:db8::2"), Dst: ip("2001:db8::1"), Proto: ProtoICMPv6, ICMPType: 1, ICMPCode: 4,
		Quoted: Quoted{Src: ip("2001:db8::1"), Dst: ip("2001:db8::2"), Proto: ProtoUDP, SrcPort: 1000, DstPort: 53}}
	arp := Flow{SrcMAC: srcMAC, DstMAC: dstMAC, EtherType: EtherTypeARP}
	lldp := Flow{SrcMAC: srcMAC, DstMAC: dstMAC, EtherType: 0x88cc}
	vlan := Flow{SrcMAC: [6]byte{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}, VLAN: 100}
	vlanPrio := vlan
	vlanPrio.VLAN = 5<<13 | 100
	l4hash := udp4()
	l4hash.L4Hash = true

	tests := []struct {
		name   string
		policy Policy
		flow   Flow
		kernel KernelVersion
		want   uint32
		err    error
	}{
		// layer2: d[5]^s[5]^ethertype = 0x0a^0x05^0x0800.
		{"layer2 ipv4", PolicyLayer2, udp4(), linux61, 0x080f, nil},
		// Before 5.15 the raw be16 0x0800 reads as 0x0008 on LE.
		{"layer2 ipv4 5.10", PolicyLayer2, udp4(), linux510, 0x0007, nil},
		// 0x0f ^ 0x86dd; before 5.15: 0x0f ^ 0xdd86.
		{"layer2 ipv6", PolicyLayer2, tcp6, linux61, 0x86d2, nil},
		{"layer2 ipv6 5.10", PolicyLayer2, tcp6, linux510, 0xdd89, nil},

		// layer2+3: h = 0x080f; addresses LE(0a 00 00 01) ^ LE(0a 00 00 02)
		// = 0x0100000a ^ 0x0200000a = 0x03000000; h = 0x0300080f;
		// h ^= h>>16 (0x0300): 0x03000b0f; h ^= h>>8 (0x0003000b):
		// 0x03030b04; no shift since 5.18 / 5.15.38.
		{"layer2+3 ipv4", PolicyLayer23, udp4(), linux61, 0x03030b04, nil},
		{"layer2+3 ipv4 5.15.38", PolicyLayer23, udp4(), linux5138, 0x03030b04, nil},
		// 5.15.37 still shifts: 0x03030b04 >> 1.
		{"layer2+3 ipv4 5.15.37", PolicyLayer23, udp4(), linux5137, 0x01818582, nil},
		// 5.10: h = 0x0f^0x0008 = 0x0007 -> 0x03000007 -> 0x03000307 ->
		// 0x03030304 -> >>1 0x01818182.
		{"layer2+3 ipv4 5.10", PolicyLayer23, udp4(), linux510, 0x01818182, nil},

		// layer3+4: ports bytes 03 e8 00 35 -> LE 0x3500e803; ^0x03000000 =
		// 0x3600e803; ^>>16 (0x3600): 0x3600de03; ^>>8 (0x003600de):
		// 0x3636dedd; >>1: 0x1b1b6f6e.
		{"layer3+4 udp4", PolicyLayer34, udp4(), linux61, 0x1b1b6f6e, nil},
		{"layer3+4 udp4 5.10", PolicyLayer34, udp4(), linux510, 0x1b1b6f6e, nil},
		// IPv6: ipv6_addr_hash(2001:db8::1) = LE(20 01 0d b8) ^ LE(00 00 00
		// 01) = 0xb80d0120 ^ 0x01000000; the two addresses xor to
		// 0x03000000. Ports 9c 40 01 bb -> 0xbb01409c; ^ = 0xb801409c;
		// ^>>16: 0xb801f89d; ^>>8: 0xb8b9f965; >>1: 0x5c5cfcb2.
		{"layer3+4 tcp6", PolicyLayer34, tcp6, linux61, 0x5c5cfcb2, nil},
		// ICMP echo: key bytes 08 00 then id 0x1234 in host order (34 12):
		// 0x12340008; addresses LE(c0 a8 01 0a)^LE(c0 a8 01 14) =
		// 0x1e000000; h = 0x0c340008; ^>>16: 0x0c340c3c; ^>>8:
		// 0x0c383830; >>1: 0x061c1c18.
		{"layer3+4 icmp echo", PolicyLayer34, icmpEcho, linux61, 0x061c1c18, nil},
		// 5.5 to 5.10.26 stored the id as it sits in the packet (12 34):
		// 0x34120008 -> 0x2a120008 -> 0x2a122a1a -> 0x2a383830 -> 0x151c1c18.
		{"layer3+4 icmp echo 5.10.26", PolicyLayer34, icmpEcho, linux5102, 0x151c1c18, nil},
		// Before 5.5 ICMP had no key: addresses only, 0x1e000000 ->
		// 0x1e001e00 -> 0x1e1e1e1e -> 0x0f0f0f0f.
		{"layer3+4 icmp echo 5.4", PolicyLayer34, icmpEcho, linux54, 0x0f0f0f0f, nil},
		// ICMPv6 echo request: 80 00 02 01 -> 0x01020080; ^0x03000000 (the
		// addresses) = 0x02020080; ^>>16: 0x02020282; ^>>8: 0x02000080;
		// >>1: 0x01000040.
		{"layer3+4 icmpv6 echo", PolicyLayer34, echo6, linux61, 0x01000040, nil},
		// An ICMPv6 error quoting [2001:db8::1]:1000 -> [2001:db8::2]:53:
		// the same addresses xor and ports as udp4, so its value.
		{"layer3+4 icmpv6 error", PolicyLayer34, unreach6, linux61, 0x1b1b6f6e, nil},
		// IPv6 fragments: no ports, 0x03000000 folds to 0x01818181.
		{"layer3+4 fragment6", PolicyLayer34, frag6, linux61, 0x01818181, nil},
		// Identifier 0 counts as 1: 0x00010008 -> 0x1e010008 -> 0x1e011e09
		// -> 0x1e1f1f17 -> 0x0f0f8f8b.
		{"layer3+4 icmp echo id 0", PolicyLayer34, icmpEchoID0, linux61, 0x0f0f8f8b, nil},
		// An error hashes the quoted packet: the same keys as udp4.
		{"layer3+4 icmp error", PolicyLayer34, portUnreach, linux61, 0x1b1b6f6e, nil},
		// Fragments: ports 0: 0x03000000 -> 0x03000300 -> 0x03030303 ->
		// 0x01818181.
		{"layer3+4 fragment", PolicyLayer34, frag, linux61, 0x01818181, nil},
		// ESP: the SPI bytes de ad be ef -> 0xefbeadde; ^ = 0xecbeadde;
		// ^>>16: 0xecbe4160; ^>>8: 0xec52ff21; >>1: 0x76297f90.
		{"layer3+4 esp", PolicyLayer34, esp, linux61, 0x76297f90, nil},
		// Not IP: the layer2 hash, no folds: 0x0f ^ 0x88cc.
		{"layer3+4 lldp", PolicyLayer34, lldp, linux61, 0x88c3, nil},
		// layer2+3 of an ICMP error uses the quoted addresses:
		// LE(c0 00 02 07) ^ LE(c6 33 64 09) = 0x070200c0 ^ 0x096433c6 =
		// 0x0e663306; ^0x080f = 0x0e663b09; ^>>16: 0x0e66356f; ^>>8:
		// 0x0e68535a.
		{"layer2+3 icmp error", PolicyLayer23, timeExceeded, linux61, 0x0e68535a, nil},
		// ARP is not IP for layer2+3: the layer2 hash 0x0f^0x0806.
		{"layer2+3 arp", PolicyLayer23, arp, linux61, 0x0809, nil},
		{"layer2 arp", PolicyLayer2, arp, linux61, 0x0809, nil},

		// encap: the same as layer2+3 / layer3+4 for plain packets...
		{"encap2+3 ipv4", PolicyEncap23, udp4(), linux61, 0x03030b04, nil},
		{"encap3+4 udp4", PolicyEncap34, udp4(), linux61, 0x1b1b6f6e, nil},
		{"encap3+4 icmp echo", PolicyEncap34, icmpEcho, linux61, 0x061c1c18, nil},
		// ...but ICMP errors hash by their own outer header: addresses
		// 10.0.0.2^10.0.0.1, no ports: 0x01818181.
		{"encap3+4 icmp error", PolicyEncap34, portUnreach, linux61, 0x01818181, nil},
		// ARP dissects to zero keys: 0x0809 folded: ^>>8 -> 0x0801.
		{"encap2+3 arp", PolicyEncap23, arp, linux61, 0x0801, nil},
		// encap3+4 ARP: no ports, no addresses: 0.
		{"encap3+4 arp", PolicyEncap34, arp, linux61, 0, nil},
		{"encap3+4 socket hash", PolicyEncap34, l4hash, linux61, 0, ErrL4Hash},
		{"encap2+3 ignores socket hash", PolicyEncap23, l4hash, linux61, 0x03030b04, nil},

		// vlan+srcmac: 0x525400 ^ 0x123456 ^ 100 = 0x406056 ^ 0x64.
		{"vlan+srcmac", PolicyVLANSrcMAC, vlan, linux61, 0x406032, nil},
		// The whole TCI: priority 5 is 0xa000.
		{"vlan+srcmac priority", PolicyVLANSrcMAC, vlanPrio, linux61, 0x40c032, nil},
		{"vlan+srcmac untagged", PolicyVLANSrcMAC, Flow{SrcMAC: vlan.SrcMAC}, linux61, 0x406056, nil},
		{"vlan+srcmac 5.10", PolicyVLANSrcMAC, vlan, linux510, 0, ErrPolicyTooNew},

		{"old kernel", PolicyLayer34, udp4(), KernelVersion{4, 9, 0}, 0, ErrOldKernel},
		{"unknown policy", Policy(9), udp4(), linux61, 0, ErrUnknownPolicy},
		{"no addresses", PolicyLayer34, Flow{Proto: ProtoUDP}, linux61, 0, ErrFlowAddresses},
		{"mixed families", PolicyLayer23, Flow{Src: ip("10.0.0.1"), Dst: ip("::1")}, linux61, 0, ErrFlowAddresses},
		{"ethertype vs family", PolicyLayer23, Flow{EtherType: EtherTypeIPv6, Src: ip("10.0.0.1"), Dst: ip("10.0.0.2")}, linux61, 0, ErrFlowEtherType},
		{"icmp error without quote", PolicyLayer34, Flow{Src: ip("10.0.0.1"), Dst: ip("10.0.0.2"), Proto: ProtoICMP, ICMPType: 3}, linux61, 0, ErrFlowQuoted},
		{"gre under encap", PolicyEncap34, Flow{Src: ip("10.0.0.1"), Dst: ip("10.0.0.2"), Proto: 47}, linux61, 0, ErrEncapProto},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Hash(tt.policy, &tt.flow, tt.kernel)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("hash %#08x, want %#08x", got, tt.want)
			}
		})
	}
}

// The two unpredictable errors match ErrUnpredictable; flow errors do not.
func TestUnpredictableIs(t *testing.T) {
	for _, err := range []error{ErrL4Hash, ErrOldKernel, ErrEncapProto} {
		if !errors.Is(err, ErrUnpredictable) {
			t.Errorf("%v is not ErrUnpredictable", err)
		}
	}
	if errors.Is(ErrFlowAddresses, ErrUnpredictable) {
		t.Error("a bad flow is not unpredictable")
	}
}

// randomFlow draws an IPv4 or IPv6 UDP/TCP flow.
func randomFlow(r *rand.Rand) Flow {
	f := Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Proto: ProtoUDP, SrcPort: uint16(r.Uint32()), DstPort: uint16(r.Uint32())}
	if r.IntN(2) == 0 {
		f.Proto = ProtoTCP
	}
	if r.IntN(2) == 0 {
		var a, b [4]byte
		binary.NativeEndian.PutUint32(a[:], r.Uint32())
		binary.NativeEndian.PutUint32(b[:], r.Uint32())
		f.Src, f.Dst = netip.AddrFrom4(a), netip.AddrFrom4(b)
	} else {
		var a, b [16]byte
		binary.NativeEndian.PutUint64(a[:8], r.Uint64())
		binary.NativeEndian.PutUint64(a[8:], r.Uint64())
		binary.NativeEndian.PutUint64(b[:8], r.Uint64())
		binary.NativeEndian.PutUint64(b[8:], r.Uint64())
		f.Src, f.Dst = netip.AddrFrom16(a), netip.AddrFrom16(b)
	}
	return f
}

// Under layer3+4 the final >>1 drops the bit a source port's lowest bit
// lands on after the folds, modulo the bits above: p and p^1 (and dport q
// and q^1) share a slave whenever the slave count is a power of two up to
// 128. With 3 slaves they may not.
func TestLayer34AdjacentPorts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		f := randomFlow(r)
		g := f
		g.SrcPort ^= 1
		h := f
		h.DstPort ^= 1
		a, _ := Hash(PolicyLayer34, &f, linux61)
		b, _ := Hash(PolicyLayer34, &g, linux61)
		c, _ := Hash(PolicyLayer34, &h, linux61)
		for n := 2; n <= 128; n *= 2 {
			if Pick(a, n) != Pick(b, n) || Pick(a, n) != Pick(c, n) {
				t.Fatalf("%v: ports %d/%d, %d^1 and %d^1 split over %d slaves: %#x %#x %#x", f.Src, f.SrcPort, f.DstPort, f.SrcPort, f.DstPort, n, a, b, c)
			}
		}
	}
}

// With layer2 (and layer2+3 to one address pair) and one peer, every flow
// takes the same slave whatever its addresses and ports.
func TestLayer2OnePeer(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var want [2]uint32
	for i := 0; i < 5000; i++ {
		f := randomFlow(r)
		fam := 0
		if f.Src.Is6() {
			fam = 1
		}
		h, err := Hash(PolicyLayer2, &f, linux61)
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 || want[fam] == 0 {
			want[fam] = h
		}
		if h != want[fam] {
			t.Fatalf("layer2 hash %#x for %v, want %#x for every flow of the family", h, f.Src, want[fam])
		}
	}
	// Same addresses, any ports: layer2+3 gives one value too.
	f := udp4()
	base, _ := Hash(PolicyLayer23, &f, linux61)
	for i := 0; i < 1000; i++ {
		f.SrcPort, f.DstPort = uint16(r.Uint32()), uint16(r.Uint32())
		if h, _ := Hash(PolicyLayer23, &f, linux61); h != base {
			t.Fatalf("layer2+3 depends on ports: %#x vs %#x", h, base)
		}
	}
}

// The Predictor's modes.
func TestPredictorModes(t *testing.T) {
	f := udp4()
	usable := []string{"eth0", "eth1", "eth2"}
	tests := []struct {
		name  string
		p     Predictor
		flow  Flow
		want  Outcome
		slave string
	}{
		// 0x1b1b6f6e % 3 == 2.
		{"xor", Predictor{Mode: ModeXOR, Policy: PolicyLayer34, Kernel: linux61, Usable: usable}, f, Hashed, "eth2"},
		{"802.3ad", Predictor{Mode: Mode8023AD, Policy: PolicyLayer34, Kernel: linux61, Usable: usable[:2]}, f, Hashed, "eth0"},
		{"802.3ad none usable", Predictor{Mode: Mode8023AD, Policy: PolicyLayer34, Kernel: linux61}, f, Dropped, ""},
		{"active-backup", Predictor{Mode: ModeActiveBackup, Usable: usable, ActiveSlave: "eth1"}, f, Active, "eth1"},
		{"active-backup none", Predictor{Mode: ModeActiveBackup, Usable: usable}, f, Dropped, ""},
		{"balance-rr", Predictor{Mode: ModeRoundRobin, Usable: usable}, f, Unpredictable, ""},
		{"balance-alb", Predictor{Mode: ModeALB, Usable: usable}, f, Unpredictable, ""},
		{"broadcast", Predictor{Mode: ModeBroadcast, Usable: usable}, f, EverySlave, ""},
		{"tlb dynamic", Predictor{Mode: ModeTLB, TLBDynamicLB: true, Usable: usable, ActiveSlave: "eth0"}, f, Unpredictable, ""},
		{"tlb static", Predictor{Mode: ModeTLB, Policy: PolicyLayer34, Kernel: linux61, Usable: usable, ActiveSlave: "eth0"}, f, Hashed, "eth2"},
		{"tlb static arp", Predictor{Mode: ModeTLB, Policy: PolicyLayer34, Kernel: linux61, Usable: usable, ActiveSlave: "eth0"}, Flow{EtherType: EtherTypeARP, DstMAC: dstMAC}, Active, "eth0"},
		{"tlb static broadcast MAC", Predictor{Mode: ModeTLB, Policy: PolicyLayer34, Kernel: linux61, Usable: usable, ActiveSlave: "eth1"}, func() Flow { g := f; g.DstMAC = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}; return g }(), Active, "eth1"},
		{"tlb static ND", Predictor{Mode: ModeTLB, Policy: PolicyLayer34, Kernel: linux61, Usable: usable, ActiveSlave: "eth1"}, Flow{DstMAC: dstMAC, Src: ip("fe80::1"), Dst: ip("fe80::2"), Proto: ProtoICMPv6, ICMPType: 135}, Unpredictable, ""},
		{"encap3+4 local socket", Predictor{Mode: ModeXOR, Policy: PolicyEncap34, Kernel: linux61, Usable: usable}, func() Flow { g := f; g.L4Hash = true; return g }(), Unpredictable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.p.Predict(&tt.flow)
			if err != nil {
				t.Fatal(err)
			}
			if c.Outcome != tt.want || c.Slave != tt.slave {
				t.Errorf("got %v %q (%s), want %v %q", c.Outcome, c.Slave, c.Reason, tt.want, tt.slave)
			}
			if c.Outcome == Hashed && (c.Index < 0 || c.Index >= c.Count || tt.p.Usable[c.Index] != c.Slave) {
				t.Errorf("index %d of %d does not name %s", c.Index, c.Count, c.Slave)
			}
			if c.Outcome != Hashed && c.Reason == "" {
				t.Error("no reason")
			}
		})
	}
}

func sp(s string) *string { return &s }

// testBond is a 4-slave 802.3ad bond: eth0, eth1 in aggregator 1 (active),
// eth2 down, eth3 in aggregator 2.
func testBond() Bond {
	up, down := sp("up"), sp("down")
	active, backup := sp("active"), sp("backup")
	return Bond{Name: "bond0", Mode: sp(Mode8023AD), XmitHashPolicy: sp("layer3+4 1"),
		LACP: &LACP{AggregatorID: new(1)},
		Slaves: []Slave{
			{Name: "eth0", MIIStatus: up, State: active, AggregatorID: new(1)},
			{Name: "eth1", MIIStatus: up, State: active, AggregatorID: new(1)},
			{Name: "eth2", MIIStatus: down, State: backup, AggregatorID: new(1)},
			{Name: "eth3", MIIStatus: up, State: backup, AggregatorID: new(2)},
		}}
}

func TestUsableSlaves(t *testing.T) {
	b := testBond()
	usable, excluded := UsableSlaves(&b)
	if len(usable) != 2 || usable[0] != "eth0" || usable[1] != "eth1" {
		t.Errorf("usable %v, want [eth0 eth1]", usable)
	}
	want := map[string]string{"eth2": "link down", "eth3": "in aggregator 2, the active one is 1"}
	if len(excluded) != 2 {
		t.Fatalf("excluded %v", excluded)
	}
	for _, e := range excluded {
		if want[e.Slave] != e.Reason {
			t.Errorf("%s excluded for %q, want %q", e.Slave, e.Reason, want[e.Slave])
		}
	}

	// Without the bond's aggregator id (no CAP_NET_ADMIN), eth3 still
	// goes: its state is backup.
	b.LACP = nil
	if usable, _ := UsableSlaves(&b); len(usable) != 2 {
		t.Errorf("without aggregator ids: usable %v", usable)
	}

	// Going down or coming back is not up.
	b = testBond()
	b.Slaves[1].MIIStatus = sp("going back")
	if usable, _ := UsableSlaves(&b); len(usable) != 1 {
		t.Errorf("a slave going back is usable: %v", usable)
	}

	// No active aggregator: nothing transmits.
	b = testBond()
	b.LACP = &LACP{NoActiveAggregator: true}
	if usable, excluded := UsableSlaves(&b); len(usable) != 0 || len(excluded) != 4 {
		t.Errorf("no active aggregator: usable %v, excluded %v", usable, excluded)
	}

	// balance-xor ignores aggregators.
	b = testBond()
	b.Mode = sp(ModeXOR)
	b.Slaves[3].State = sp("active")
	if usable, _ := UsableSlaves(&b); len(usable) != 3 {
		t.Errorf("balance-xor: usable %v, want eth0 eth1 eth3", usable)
	}
}

// TestAppendUsableAllocs: AppendUsable, asked on every tick, agrees with
// UsableSlaves and allocates nothing into a slice with room, though two
// slaves are excluded (their reasons, words, are not made).
func TestAppendUsableAllocs(t *testing.T) {
	b := testBond()
	want, _ := UsableSlaves(&b)
	dst := make([]string, 0, len(b.Slaves))
	slave := func(i int) *Slave { return &b.Slaves[i] }
	if got := AppendUsable(dst, &b, len(b.Slaves), slave); !slices.Equal(got, want) {
		t.Fatalf("AppendUsable %v, UsableSlaves %v", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { dst = AppendUsable(dst[:0], &b, len(b.Slaves), slave) }); n != 0 {
		t.Errorf("AppendUsable: %v allocations a call, want none", n)
	}
}

func TestNewPredictor(t *testing.T) {
	b := testBond()
	p, err := NewPredictor(&b, linux61)
	if err != nil {
		t.Fatal(err)
	}
	if p.Policy != PolicyLayer34 || len(p.Usable) != 2 {
		t.Errorf("predictor %+v", p)
	}
	f := udp4()
	c, err := p.Predict(&f)
	if err != nil || c.Outcome != Hashed || c.Slave != "eth0" || c.Hash != 0x1b1b6f6e {
		t.Errorf("choice %+v, %v; want eth0 by 0x1b1b6f6e", c, err)
	}
	b.XmitHashPolicy = nil
	if _, err := NewPredictor(&b, linux61); err == nil {
		t.Error("no error without a policy")
	}
	b.Mode = sp("bogus")
	if _, err := NewPredictor(&b, linux61); err == nil {
		t.Error("no error for an unknown mode")
	}
}

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]Policy{"layer2": 0, "layer3+4": 1, "layer3+4 1": 1, "2": 2, "encap2+3": 3, "ENCAP3+4": 4, "vlan+srcmac": 5} {
		got, err := ParsePolicy(in)
		if err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "layer4", "6", "-1"} {
		if _, err := ParsePolicy(in); err == nil {
			t.Errorf("ParsePolicy(%q): no error", in)
		}
	}
	if PolicyVLANSrcMAC.String() != "vlan+srcmac" || Policy(7).String() != "policy(7)" {
		t.Error("Policy.String")
	}
}

func TestKernelVersion(t *testing.T) {
	for in, want := range map[string]KernelVersion{
		"6.1.0-57-amd64": {6, 1, 0}, "5.15.149": {5, 15, 149}, "4.18.0-553.el8_10.x86_64": {4, 18, 0},
		"6.18.44-fc-v1045": {6, 18, 44}, "6.1": {6, 1, 0}, "v5.10.27\n": {5, 10, 27},
	} {
		got, err := ParseKernelVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseKernelVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseKernelVersion("linux"); err == nil {
		t.Error("no error for a non-version")
	}

	for _, tt := range []struct {
		files map[string]string
		want  KernelVersion
	}{
		{map[string]string{"proc/version_signature": "Ubuntu 5.15.0-105.115-generic 5.15.149\n", "proc/sys/kernel/osrelease": "5.15.0-105-generic\n"}, KernelVersion{5, 15, 149}},
		{map[string]string{"proc/sys/kernel/version": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)\n", "proc/sys/kernel/osrelease": "6.1.0-41-amd64\n"}, KernelVersion{6, 1, 158}},
		{map[string]string{"proc/sys/kernel/version": "#1 SMP PREEMPT_DYNAMIC @0\n", "proc/sys/kernel/osrelease": "6.18.44-fc-v1045\n"}, KernelVersion{6, 18, 44}},
	} {
		fsys := fstest.MapFS{}
		for name, data := range tt.files {
			fsys[name] = &fstest.MapFile{Data: []byte(data), ModTime: time.Unix(0, 0)}
		}
		got, from, err := RunningKernel(fsys)
		if err != nil || got != tt.want || from == "" {
			t.Errorf("RunningKernel(%v) = %v (%s), %v; want %v", tt.files, got, from, err, tt.want)
		}
	}
	if _, _, err := RunningKernel(fstest.MapFS{}); err == nil {
		t.Error("no error without /proc")
	}

	// The version rules at their edges.
	for _, tt := range []struct {
		k            KernelVersion
		shift, icmpH bool
	}{
		{KernelVersion{4, 14, 0}, true, false},
		{KernelVersion{5, 10, 26}, true, false},
		{KernelVersion{5, 10, 27}, true, true},
		{KernelVersion{5, 11, 11}, true, true},
		{KernelVersion{5, 15, 37}, true, true},
		{KernelVersion{5, 15, 38}, false, true},
		{KernelVersion{5, 16, 20}, true, true},
		{KernelVersion{5, 17, 5}, true, true},
		{KernelVersion{5, 17, 6}, false, true},
		{KernelVersion{5, 18, 0}, false, true},
		{KernelVersion{6, 1, 0}, false, true},
	} {
		if shiftsEveryPolicy(tt.k) != tt.shift || icmpIDHostOrder(tt.k) != tt.icmpH {
			t.Errorf("%v: shift-all %v, icmp id host order %v; want %v, %v", tt.k, shiftsEveryPolicy(tt.k), icmpIDHostOrder(tt.k), tt.shift, tt.icmpH)
		}
	}
}

// Hashing and predicting allocate nothing.
func TestHashAllocs(t *testing.T) {
	p := &Predictor{Mode: Mode8023AD, Policy: PolicyLayer34, Kernel: linux61, Usable: []string{"a", "b", "c"}}
	f := udp4()
	tcp6 := Flow{Src: ip("2001:db8::1"), Dst: ip("2001:db8::2"), Proto: ProtoTCP, SrcPort: 1, DstPort: 2, L4Hash: true}
	if n := testing.AllocsPerRun(100, func() {
		for pol := Policy(0); pol <= PolicyVLANSrcMAC; pol++ {
			_, _ = Hash(pol, &f, linux61)
			_, _ = Hash(pol, &tcp6, linux61)
		}
		_, _ = p.Predict(&f)
		p.Policy = PolicyEncap34
		_, _ = p.Predict(&tcp6) // unpredictable
		p.Policy = PolicyLayer34
	}); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

// FuzzHash: any flow, any policy, any kernel, any slave count: no panic,
// and a hashed choice is a valid index naming its slave.
func FuzzHash(f *testing.F) {
	f.Add([]byte("\x01\x11\x00\x00\x0a\x00\x00\x01\x0a\x00\x00\x02\x03\xe8\x00\x35"), uint8(1), uint8(3), uint16(0x0601))
	f.Add([]byte("\x04\x3a\x01\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x03\x03"), uint8(4), uint8(2), uint16(0x050a))
	f.Add([]byte{}, uint8(0), uint8(0), uint16(0))
	modes := []string{ModeXOR, Mode8023AD, ModeTLB, ModeActiveBackup, ModeRoundRobin, ModeBroadcast, ModeALB}
	names := []string{"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"}
	f.Fuzz(func(t *testing.T, data []byte, policy, slaves uint8, kernel uint16) {
		fl := flowFromBytes(data)
		k := KernelVersion{int(kernel >> 8 % 8), int(kernel & 0xff % 32), int(kernel>>3) % 200}
		p := Predictor{Mode: modes[int(policy>>4)%len(modes)], Policy: Policy(policy & 0x7), Kernel: k,
			Usable: names[:int(slaves)%(len(names)+1)], ActiveSlave: "s0", TLBDynamicLB: policy&0x8 != 0}
		c, err := p.Predict(&fl)
		if err != nil {
			return
		}
		if c.Outcome == Hashed {
			if c.Index < 0 || c.Index >= len(p.Usable) || c.Index >= c.Count || p.Usable[c.Index] != c.Slave {
				t.Fatalf("choice %+v over %d slaves", c, len(p.Usable))
			}
		} else if c.Reason == "" {
			t.Fatalf("%v without a reason", c.Outcome)
		}
		if h, err := Hash(p.Policy, &fl, k); err == nil && Pick(h, len(p.Usable)) >= len(p.Usable) {
			t.Fatalf("Pick(%#x, %d) out of range", h, len(p.Usable))
		}
	})
}

// flowFromBytes spends fuzz bytes on a flow: a flags byte, the protocol,
// then addresses (4 or 16 bytes each), ports, ICMP fields and a quote.
func flowFromBytes(d []byte) Flow {
	next := func(n int) []byte {
		if len(d) < n {
			b := make([]byte, n)
			copy(b, d)
			d = d[len(d):]
			return b
		}
		b := d[:n]
		d = d[n:]
		return b
	}
	flags := next(1)[0]
	var fl Flow
	fl.Proto = next(1)[0]
	addr := func(six bool) netip.Addr {
		if six {
			return netip.AddrFrom16([16]byte(next(16)))
		}
		return netip.AddrFrom4([4]byte(next(4)))
	}
	six := flags&1 != 0
	if flags&2 == 0 {
		fl.Src, fl.Dst = addr(six), addr(six)
	}
	if flags&4 != 0 {
		fl.EtherType = binary.BigEndian.Uint16(next(2))
	}
	fl.Fragment = flags&8 != 0
	fl.L4Hash = flags&16 != 0
	fl.SrcPort, fl.DstPort = binary.BigEndian.Uint16(next(2)), binary.BigEndian.Uint16(next(2))
	fl.ICMPType, fl.ICMPCode = next(1)[0], next(1)[0]
	fl.ICMPID = binary.BigEndian.Uint16(next(2))
	fl.VLAN = binary.BigEndian.Uint16(next(2))
	copy(fl.SrcMAC[:], next(6))
	copy(fl.DstMAC[:], next(6))
	if flags&32 != 0 {
		qsix := six != (flags&64 != 0)
		fl.Quoted = Quoted{Src: addr(qsix), Dst: addr(qsix), Proto: next(1)[0], Fragment: flags&128 != 0}
	}
	return fl
}

// benchFlows are the flows the benchmarks cycle through.
func benchFlows(n int) []Flow {
	r := rand.New(rand.NewPCG(5, 6))
	fs := make([]Flow, n)
	for i := range fs {
		fs[i] = randomFlow(r)
	}
	return fs
}

// BenchmarkHash1M hashes a million flows (layer3+4, half IPv4, half IPv6)
// per iteration and picks a slave among 4; the goal is under 100 ms.
func BenchmarkHash1M(b *testing.B) {
	flows := benchFlows(1 << 12)
	const n = 1_000_000
	b.ReportAllocs()
	var sink int
	for b.Loop() {
		for i := 0; i < n; i++ {
			h, _ := Hash(PolicyLayer34, &flows[i&(len(flows)-1)], linux61)
			sink += Pick(h, 4)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/1M-flows")
	_ = sink
}

// BenchmarkPredict is one flow through a bond's Predictor, per policy.
func BenchmarkPredict(b *testing.B) {
	flows := benchFlows(1 << 12)
	for pol := Policy(0); pol <= PolicyVLANSrcMAC; pol++ {
		b.Run(pol.String(), func(b *testing.B) {
			p := &Predictor{Mode: Mode8023AD, Policy: pol, Kernel: linux61, Usable: []string{"a", "b", "c", "d"}}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_, _ = p.Predict(&flows[i&(len(flows)-1)])
				i++
			}
		})
	}
}
