package bonding

// The kernel's transmit hash (drivers/net/bonding/bond_main.c:
// bond_xmit_hash, __bond_xmit_hash, bond_flow_dissect, bond_flow_ip,
// bond_eth_hash, bond_vlan_srcmac_hash, bond_ip_hash; the encap policies go
// through net/core/flow_dissector.c with the bonding's own key set), written
// again in Go from a description of a packet instead of a socket buffer.
//
// Byte order. The kernel reads packet bytes into u32s the way the CPU lays
// them out: the IPv4 addresses, the four port bytes (sport, dport as they
// sit in the packet) and the ICMP key are copied or cast, never byte-swapped.
// So the hash of the same packet differs between a little-endian host (x86,
// arm64) and a big-endian one. This file reads such words with
// binary.NativeEndian: the prediction is for a kernel running on a CPU of the
// same byte order as the one running bondtop, which holds for bondtop
// running on the server it watches. Offline predictions for a server of the
// other byte order would be wrong; x86-64 and arm64 servers, and the lab VM,
// are all little-endian.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Policy is a bond's xmit_hash_policy by its kernel number.
type Policy uint8

// The xmit_hash_policy values, numbered as the kernel numbers them.
const (
	PolicyLayer2     Policy = 0 // layer2
	PolicyLayer34    Policy = 1 // layer3+4
	PolicyLayer23    Policy = 2 // layer2+3
	PolicyEncap23    Policy = 3 // encap2+3
	PolicyEncap34    Policy = 4 // encap3+4
	PolicyVLANSrcMAC Policy = 5 // vlan+srcmac
)

// String gives the kernel's name of the policy.
func (p Policy) String() string {
	if int(p) < len(HashPolicies) {
		return HashPolicies[p]
	}
	return "policy(" + strconv.Itoa(int(p)) + ")"
}

// ParsePolicy accepts a policy's kernel name (layer3+4), its number (1), or
// the sysfs form "layer3+4 1".
func ParsePolicy(s string) (Policy, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, errors.New("empty xmit_hash_policy")
	}
	for i, name := range HashPolicies {
		if strings.EqualFold(f[0], name) {
			return Policy(i), nil
		}
	}
	if n, err := strconv.Atoi(f[0]); err == nil && n >= 0 && n < len(HashPolicies) {
		return Policy(n), nil
	}
	return 0, fmt.Errorf("unknown xmit_hash_policy %q (one of %s)", s, strings.Join(HashPolicies[:], ", "))
}

// The EtherTypes the hash tells apart.
const (
	EtherTypeIPv4 uint16 = 0x0800
	EtherTypeARP  uint16 = 0x0806
	EtherTypeRARP uint16 = 0x8035
	EtherTypeIPv6 uint16 = 0x86DD
)

// IP protocol numbers the hash looks at.
const (
	ProtoICMP    uint8 = 1
	ProtoTCP     uint8 = 6
	ProtoUDP     uint8 = 17
	ProtoDCCP    uint8 = 33
	ProtoESP     uint8 = 50
	ProtoAH      uint8 = 51
	ProtoICMPv6  uint8 = 58
	ProtoSCTP    uint8 = 132
	ProtoUDPLite uint8 = 136
)

// Flow describes one packet as the bond sees it on transmit, after the IP
// stack built it and before the bond picks a slave. Only the fields a
// policy reads matter; the zero value of the others is fine.
type Flow struct {
	// SrcMAC is the frame's source: the bond's own MAC for traffic the
	// host sends (in balance-tlb, before it is rewritten to the slave's).
	// DstMAC is the next hop's: the peer on the same subnet, else the
	// gateway. layer2, layer2+3 and encap2+3 read byte 5 of each;
	// vlan+srcmac reads SrcMAC only.
	SrcMAC, DstMAC [6]byte
	// EtherType of the frame. Zero means "IP": 0x0800 or 0x86DD from the
	// family of Src. Any other value makes the packet non-IP, which every
	// policy but vlan+srcmac hashes by layer2.
	EtherType uint16
	// VLAN is the TCI (VID plus priority bits) of the 802.1Q tag when the
	// packet leaves through a VLAN interface on top of the bond; 0 when
	// untagged. The bond offloads the tag (it sits in the socket buffer,
	// not in the frame), so only vlan+srcmac sees it, whole: priority
	// bits included.
	VLAN uint16
	// Src and Dst are the IP addresses: both IPv4 or both IPv6 (an
	// IPv4-mapped IPv6 address is IPv6).
	Src, Dst netip.Addr
	// Proto is the IP protocol (IPv6: the first next header, which the
	// hash reads without walking extension headers; model packets without
	// extension headers).
	Proto uint8
	// SrcPort and DstPort for TCP, UDP, UDP-Lite, SCTP and DCCP.
	SrcPort, DstPort uint16
	// SPI for ESP and AH, whose SPI takes the place of the ports.
	SPI uint32
	// ICMPType, ICMPCode and ICMPID (echo and timestamp identifier) for
	// ICMP and ICMPv6.
	ICMPType, ICMPCode uint8
	ICMPID             uint16
	// Quoted is the header an ICMP or ICMPv6 error carries (destination
	// unreachable, time exceeded, ...): layer2+3 and layer3+4 hash the
	// quoted packet's addresses and ports instead of the error's own, so
	// the error follows the flow it is about.
	Quoted Quoted
	// Fragment marks any fragment of a fragmented datagram, the first one
	// included: the hash then ignores ports and ICMP fields.
	Fragment bool
	// L4Hash marks a packet whose socket buffer already carries a layer 4
	// hash: sent by a local TCP or connected UDP socket, or received with
	// an RSS hash and forwarded. encap3+4 uses that hash as is, and user
	// space cannot know it.
	L4Hash bool
}

// Quoted is the start of the offending packet that an ICMP error quotes.
type Quoted struct {
	Src, Dst         netip.Addr
	Proto            uint8
	SrcPort, DstPort uint16
	Fragment         bool
}

// ErrUnpredictable is matched (errors.Is) by every UnpredictableError.
var ErrUnpredictable = errors.New("unpredictable")

// UnpredictableError says why the kernel's choice cannot be known from a
// description of the packet. It is not a failure: the kernel decides
// something user space does not see.
type UnpredictableError struct{ Reason string }

func (e *UnpredictableError) Error() string { return "unpredictable: " + e.Reason }

// Is makes errors.Is(err, ErrUnpredictable) true.
func (e *UnpredictableError) Is(target error) bool { return target == ErrUnpredictable }

// The reasons Hash gives up. They are values, so the hash path allocates
// nothing.
var (
	ErrL4Hash = &UnpredictableError{"encap3+4 uses the hash the socket or the receiving NIC put on the packet (skb->hash), which user space cannot see"}
	// ErrOldKernel: before 4.14 the hash changed in stable updates that
	// bondtop does not track.
	ErrOldKernel  = &UnpredictableError{"kernels before 4.14 hash differently and are not modelled"}
	ErrEncapProto = &UnpredictableError{"encap policies dissect tunnels, VLAN, MPLS, PPPoE and other EtherTypes deeper than bondtop models"}
)

// Errors for flows that do not describe a packet.
var (
	ErrUnknownPolicy = errors.New("unknown xmit_hash_policy")
	ErrPolicyTooNew  = errors.New("vlan+srcmac exists since Linux 5.12")
	ErrFlowAddresses = errors.New("flow needs a source and a destination address of the same family (both IPv4 or both IPv6)")
	ErrFlowQuoted    = errors.New("an ICMP error flow needs the quoted packet's addresses, of the flow's family")
	ErrFlowEtherType = errors.New("flow's EtherType does not match its address family")
)

// Hash returns the 32-bit value the kernel computes for f under policy p
// (bond_xmit_hash), on a kernel of version k. The slave is
// usable[hash % len(usable)] (see Pick). The error is an
// *UnpredictableError when the kernel uses something user space cannot see,
// or one of the ErrFlow/ErrPolicy errors for an impossible request. Hash
// allocates nothing.
func Hash(p Policy, f *Flow, k KernelVersion) (uint32, error) {
	if k.less(4, 14, 0) {
		return 0, ErrOldKernel
	}
	switch p {
	case PolicyLayer2:
		return ethHash(f, f.etherType(), k), nil
	case PolicyVLANSrcMAC:
		if k.less(5, 12, 0) {
			return 0, ErrPolicyTooNew
		}
		return vlanSrcMACHash(f), nil
	case PolicyLayer23, PolicyLayer34, PolicyEncap23, PolicyEncap34:
	default:
		return 0, ErrUnknownPolicy
	}
	// The socket's hash wins before anything is dissected.
	if p == PolicyEncap34 && f.L4Hash {
		return 0, ErrL4Hash
	}
	et := f.etherType()
	var keys flowKeys
	var ok bool
	var err error
	if p == PolicyEncap23 || p == PolicyEncap34 {
		ok, err = dissectEncap(f, et, k, &keys)
	} else {
		ok, err = dissectIP(f, et, p == PolicyLayer34, k, &keys)
	}
	if err != nil {
		return 0, err
	}
	if !ok {
		// Not IP (or not dissectable): the kernel falls back to the
		// layer2 hash, without the folds and the shift.
		return ethHash(f, et, k), nil
	}

	var h uint32
	switch {
	case p == PolicyLayer23 || p == PolicyEncap23:
		h = ethHash(f, et, k)
	case keys.icmpID != 0:
		// ICMP echo: type, code and identifier stand in for the ports.
		h = keys.icmp
	default:
		h = keys.ports
	}
	h ^= keys.dst ^ keys.src
	h ^= h >> 16
	h ^= h >> 8
	if p == PolicyLayer34 || p == PolicyEncap34 || shiftsEveryPolicy(k) {
		// The low bit goes because most clients pick even and odd
		// source ports alike; so ports p and p^1 share a slave.
		h >>= 1
	}
	return h, nil
}

// Pick is the kernel's choice among n usable slaves: hash % n. It returns
// -1 when n is 0 (the kernel drops the packet).
func Pick(hash uint32, n int) int {
	if n <= 0 {
		return -1
	}
	return int(hash % uint32(n))
}

// flowKeys is the part of the kernel's struct flow_keys the hash reads,
// each already a host-order u32 as the kernel would read it.
type flowKeys struct {
	src, dst uint32 // flow_get_u32_src / flow_get_u32_dst
	ports    uint32 // the four port bytes read as a u32
	icmp     uint32 // type, code, id read as a u32
	icmpID   uint16 // zero: no identifier (the kernel's "use the ports")
}

// etherType is the frame's EtherType: the explicit one, else IP's by family.
func (f *Flow) etherType() uint16 {
	switch {
	case f.EtherType != 0:
		return f.EtherType
	case f.Src.Is4():
		return EtherTypeIPv4
	default:
		// IPv6, or no address at all: an IPv6 frame without valid
		// addresses is rejected by the dissectors.
		return EtherTypeIPv6
	}
}

// ethHash is bond_eth_hash: the last bytes of the two MACs and the
// EtherType. Since 5.15 the EtherType is converted to host order; before,
// the raw big-endian field was read as a host-order u16 (0x0008 for IPv4 on
// little-endian CPUs).
func ethHash(f *Flow, et uint16, k KernelVersion) uint32 {
	h := uint32(f.DstMAC[5] ^ f.SrcMAC[5])
	if k.less(5, 15, 0) {
		var b [2]byte
		binary.BigEndian.PutUint16(b[:], et)
		return h ^ uint32(binary.NativeEndian.Uint16(b[:]))
	}
	return h ^ uint32(et)
}

// vlanSrcMACHash is bond_vlan_srcmac_hash: the tag's TCI and the two halves
// (vendor, device) of the source MAC, each read big-endian as 24 bits.
func vlanSrcMACHash(f *Flow) uint32 {
	s := f.SrcMAC
	vendor := uint32(s[0])<<16 | uint32(s[1])<<8 | uint32(s[2])
	dev := uint32(s[3])<<16 | uint32(s[4])<<8 | uint32(s[5])
	return uint32(f.VLAN) ^ vendor ^ dev
}

// addrWord is what flow_get_u32_src/dst returns for an address: IPv4's four
// bytes as a host-order u32, IPv6's sixteen folded by ipv6_addr_hash (the
// xor of its four host-order u32 words; the 64-bit variant folds to the
// same value).
func addrWord(a netip.Addr) uint32 {
	if a.Is4() {
		b := a.As4()
		return binary.NativeEndian.Uint32(b[:])
	}
	b := a.As16()
	return binary.NativeEndian.Uint32(b[0:4]) ^ binary.NativeEndian.Uint32(b[4:8]) ^
		binary.NativeEndian.Uint32(b[8:12]) ^ binary.NativeEndian.Uint32(b[12:16])
}

// portsWord is __skb_flow_get_ports: the four bytes at the protocol's port
// offset (TCP, UDP, UDP-Lite, SCTP, DCCP: source and destination port; ESP
// and AH: the SPI), read as a host-order u32. Other protocols have none.
func portsWord(proto uint8, sport, dport uint16, spi uint32) uint32 {
	var b [4]byte
	switch proto {
	case ProtoTCP, ProtoUDP, ProtoDCCP, ProtoSCTP, ProtoUDPLite:
		binary.BigEndian.PutUint16(b[0:2], sport)
		binary.BigEndian.PutUint16(b[2:4], dport)
	case ProtoESP, ProtoAH:
		binary.BigEndian.PutUint32(b[:], spi)
	default:
		return 0
	}
	return binary.NativeEndian.Uint32(b[:])
}

// sameFamily checks that f's addresses are valid, of one family, and that
// the family is the EtherType's.
func (f *Flow) sameFamily(et uint16) error {
	if !f.Src.IsValid() || !f.Dst.IsValid() || f.Src.Is4() != f.Dst.Is4() {
		return ErrFlowAddresses
	}
	if f.Src.Is4() != (et == EtherTypeIPv4) {
		return ErrFlowEtherType
	}
	return nil
}

// icmpKeys fills the ICMP key as skb_flow_get_icmp_tci does: type and code
// always, the identifier only for messages that have one (0 is replaced by
// 1, since 0 means "none"). The key is the struct {u8 type; u8 code; u16
// id} copied into a u32. The identifier is stored in host order since 5.12
// (5.11.11, 5.10.27); before, the raw network-order field was stored.
func icmpKeys(f *Flow, k KernelVersion, keys *flowKeys) {
	id := uint16(0)
	if icmpHasID(f.ICMPType) {
		id = f.ICMPID
		if id == 0 {
			id = 1
		}
	}
	var b [4]byte
	b[0], b[1] = f.ICMPType, f.ICMPCode
	if icmpIDHostOrder(k) {
		binary.NativeEndian.PutUint16(b[2:], id)
	} else {
		binary.BigEndian.PutUint16(b[2:], id)
	}
	keys.icmp = binary.NativeEndian.Uint32(b[:])
	keys.icmpID = id
}

// icmpHasID is the kernel's icmp_has_id, which mixes ICMP and ICMPv6 type
// numbers without looking at the protocol: echo reply and request,
// timestamp and its reply, ICMPv6 echo request and reply.
func icmpHasID(t uint8) bool {
	switch t {
	case 0, 8, 13, 14, 128, 129:
		return true
	}
	return false
}

// icmpIsErr is icmp_is_err: destination unreachable, source quench,
// redirect, time exceeded, parameter problem.
func icmpIsErr(t uint8) bool {
	switch t {
	case 3, 4, 5, 11, 12:
		return true
	}
	return false
}

// icmpv6IsErr is icmpv6_is_err: destination unreachable, packet too big,
// time exceeded, parameter problem.
func icmpv6IsErr(t uint8) bool { return t >= 1 && t <= 4 }

// dissectIP is bond_flow_dissect for layer2+3 and layer3+4 (bond_flow_ip
// and its ICMP handling). It reports false for non-IP frames, which hash by
// layer2.
func dissectIP(f *Flow, et uint16, l34 bool, k KernelVersion, keys *flowKeys) (bool, error) {
	if et != EtherTypeIPv4 && et != EtherTypeIPv6 {
		return false, nil
	}
	if err := f.sameFamily(et); err != nil {
		return false, err
	}
	keys.src, keys.dst = addrWord(f.Src), addrWord(f.Dst)
	// Fragments carry no protocol for the kernel (IPv4: -1; IPv6: the
	// fragment header's 44): no ports, no ICMP.
	if f.Fragment {
		return true, nil
	}
	if l34 {
		keys.ports = portsWord(f.Proto, f.SrcPort, f.DstPort, f.SPI)
	}
	// ICMP handling came in 5.5; before, ICMP had no ports: addresses only.
	// The kernel tests the protocol, not the family, and ICMPv4's and
	// ICMPv6's error types by the protocol number.
	if k.less(5, 5, 0) || (f.Proto != ProtoICMP && f.Proto != ProtoICMPv6) {
		return true, nil
	}
	icmpKeys(f, k, keys)
	isErr := icmpIsErr(f.ICMPType)
	if f.Proto == ProtoICMPv6 {
		isErr = icmpv6IsErr(f.ICMPType)
	}
	if !isErr {
		return true, nil
	}
	// An error: dissect the quoted header as the flow, with the outer
	// frame's family.
	q := &f.Quoted
	if !q.Src.IsValid() || !q.Dst.IsValid() || q.Src.Is4() != (et == EtherTypeIPv4) || q.Dst.Is4() != q.Src.Is4() {
		return false, ErrFlowQuoted
	}
	keys.src, keys.dst = addrWord(q.Src), addrWord(q.Dst)
	if l34 {
		// A quoted IPv4 fragment keeps the outer protocol (ICMP, no
		// ports); a quoted IPv6 fragment shows next header 44 (no
		// ports either).
		keys.ports = 0
		if !q.Fragment {
			keys.ports = portsWord(q.Proto, q.SrcPort, q.DstPort, 0)
		}
	}
	return true, nil
}

// dissectEncap is the flow dissector as encap2+3 and encap3+4 call it, for
// packets that are not tunnelled: addresses, ports and ICMP fields, but no
// look into ICMP errors. ARP frames dissect to all-zero keys (the bonding's
// key set does not ask for ARP fields); EtherTypes the dissector walks
// through (VLAN, MPLS, PPPoE, ...) and IP tunnels are not modelled.
func dissectEncap(f *Flow, et uint16, k KernelVersion, keys *flowKeys) (bool, error) {
	switch et {
	case EtherTypeIPv4, EtherTypeIPv6:
	case EtherTypeARP, EtherTypeRARP:
		return true, nil
	case 0x8100, 0x88A8, 0x8863, 0x8864, 0x88CA, 0x8847, 0x8848, 0x8906, 0x4305, 0x88F7, 0x8902, 0x892F, 0x88FB:
		// 802.1Q/802.1ad in-band tags, PPPoE, TIPC, MPLS, FCoE,
		// batman-adv, PTP, CFM, HSR, PRP.
		return false, ErrEncapProto
	default:
		return false, nil
	}
	if err := f.sameFamily(et); err != nil {
		return false, err
	}
	keys.src, keys.dst = addrWord(f.Src), addrWord(f.Dst)
	if f.Fragment {
		return true, nil
	}
	switch f.Proto {
	case 4, 41, 47, 137:
		// IPIP, IPv6-in-IP, GRE, MPLS-in-IP: hashed by the inner
		// headers.
		return false, ErrEncapProto
	case ProtoICMP, ProtoICMPv6:
		if !k.less(5, 5, 0) {
			icmpKeys(f, k, keys)
		}
	}
	keys.ports = portsWord(f.Proto, f.SrcPort, f.DstPort, f.SPI)
	return true, nil
}
