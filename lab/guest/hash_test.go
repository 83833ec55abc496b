//go:build linux

package guest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/live"
)

// TestHashAgreement checks bondtop's transmit hash (bonding.Predictor, the
// code behind `bondtop hash`) against the real kernel: for each predictable
// policy, over 2, 3 and 4 slaves, with a slave down, in 802.3ad with a slave
// outside the active aggregator and in balance-tlb with tlb_dynamic_lb=0,
// it sends UDP datagrams for a few hundred IPv4 and IPv6 flows, one flow at
// a time, sees which slave's tx_packets moved, and compares with the slave
// bondtop predicts from the bond state its live source reads. 100% is the
// bar; the test prints the agreement table.
//
// The flows go to permanent neighbour entries with made-up MAC addresses
// (nobody needs to receive them: only the bond's choice is measured), so
// layer2 and layer2+3 see many destination MACs; in balance-xor the bond's
// own MAC changes between batches, which varies vlan+srcmac's input too
// (8021q is not in the lab's initramfs, so no VLAN tags).
func TestHashAgreement(t *testing.T) {
	k, from, err := bonding.RunningKernel(os.DirFS("/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernel %s (%s)", k, from)
	var rows []agreement
	defer func() { printAgreement(t, rows) }()

	policies := []string{"layer2", "layer2+3", "layer3+4", "encap2+3", "encap3+4", "vlan+srcmac"}
	t.Run("balance-xor", func(t *testing.T) {
		for n := 2; n <= 4; n++ {
			// A subtest each, so the veths of one go before the next.
			t.Run(fmt.Sprintf("slaves=%d", n), func(t *testing.T) {
				p := NewPair(t, 60+n, n)
				p.Root.Bond(t, p.Bond, BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer2"}, p.Slaves...)
				lab := newHashLab(t, p, 60+n, true)
				for _, pol := range policies {
					rows = append(rows, lab.run(t, k, fmt.Sprintf("xor %d slaves", n), pol))
				}
				// A pulled cable: the far end goes down, the slave loses
				// carrier and leaves the usable slaves.
				p.Peer.Down(t, p.Far[n-1])
				waitMII(t, p.Slaves[n-1], "down")
				for _, pol := range policies {
					rows = append(rows, lab.run(t, k, fmt.Sprintf("xor %d slaves, %s down", n, p.Slaves[n-1]), pol))
				}
			})
		}
	})
	t.Run("802.3ad", func(t *testing.T) {
		p := NewPair(t, 70, 4)
		spec := BondSpec{Mode: "802.3ad", XmitHashPolicy: "layer2", LACPRate: "fast"}
		// The partner aggregates the first three; dut3 is enslaved after
		// they negotiated, its far end not in the partner bond (the cable
		// in the wrong switch port): it ends in an aggregator of its own.
		p.Peer.Bond(t, "pbond0", spec, p.Far[:3]...)
		p.Root.Bond(t, p.Bond, spec, p.Slaves[:3]...)
		Eventually(t, 60*time.Second, "LACP negotiated", func() (bool, string) {
			var seen []string
			ok := true
			for _, s := range p.Slaves[:3] {
				a, _ := SysfsNum(t, s, "bonding_slave/ad_actor_oper_port_state")
				b, _ := SysfsNum(t, s, "bonding_slave/ad_partner_oper_port_state")
				seen = append(seen, fmt.Sprintf("%s=%d/%d", s, a, b))
				ok = ok && a == 63 && b == 63
			}
			return ok, strings.Join(seen, " ")
		})
		agg := SysfsInt(t, p.Bond, "bonding/ad_aggregator")
		p.Root.Enslave(t, p.Bond, p.Slaves[3])
		Eventually(t, 30*time.Second, "dut3 defaulted in an aggregator of its own", func() (bool, string) {
			st, ok := SysfsNum(t, p.Slaves[3], "bonding_slave/ad_actor_oper_port_state")
			id, _ := SysfsNum(t, p.Slaves[3], "bonding_slave/ad_aggregator_id")
			return ok && st&0x40 != 0 && id != agg, fmt.Sprintf("state %d aggregator %d (active %d)", st, id, agg)
		})
		if got := SysfsInt(t, p.Bond, "bonding/ad_aggregator"); got != agg {
			t.Fatalf("the active aggregator changed from %d to %d", agg, got)
		}
		// The bond's MAC is the LACP system id: changing it would
		// renegotiate, so it stays.
		lab := newHashLab(t, p, 70, false)
		for _, pol := range policies {
			rows = append(rows, lab.run(t, k, "802.3ad 3+1 slaves, dut3 outside", pol))
		}
	})
	t.Run("balance-tlb", func(t *testing.T) {
		p := NewPair(t, 80, 3)
		b := netlink.NewLinkBond(netlink.LinkAttrs{Name: p.Bond})
		b.Mode = netlink.BOND_MODE_BALANCE_TLB
		b.Miimon = 100
		b.TlbDynamicLb = 0
		b.XmitHashPolicy = netlink.BOND_XMIT_HASH_POLICY_LAYER3_4
		if err := p.Root.NL.LinkAdd(b); err != nil {
			t.Fatalf("balance-tlb bond: %v", err)
		}
		t.Cleanup(func() {
			if l, err := p.Root.NL.LinkByName(p.Bond); err == nil {
				p.Root.NL.LinkDel(l)
			}
		})
		for _, s := range p.Slaves {
			p.Root.Enslave(t, p.Bond, s)
		}
		p.Root.Up(t, p.Bond)
		lab := newHashLab(t, p, 80, false)
		for _, pol := range []string{"layer3+4", "layer2+3"} {
			rows = append(rows, lab.run(t, k, "tlb static 3 slaves", pol))
		}
	})
}

// waitMII waits until the bond's MII monitor shows slave in state.
func waitMII(t *testing.T, slave, state string) {
	t.Helper()
	Eventually(t, 10*time.Second, slave+" mii_status "+state, func() (bool, string) {
		got := Sysfs(t, slave, "bonding_slave/mii_status")
		return got == state, got
	})
}

// The kinds of flows a run mixes, in turn.
const (
	kindUDP4 = iota
	kindUDP6
	kindEcho4 // ICMP echo request
	kindEcho6 // ICMPv6 echo request
	kindFrag4 // UDP datagrams the IP layer fragments
	kindFrag6
	numKinds
)

var kindNames = [numKinds]string{"udp4", "udp6", "echo4", "echo6", "frag4", "frag6"}

// agreement is one row of the table: a bond configuration and a policy.
type agreement struct {
	config, policy string
	n, ok          [numKinds]int // flows compared, and matched, per kind
	unpredictable  int           // flows bondtop called unpredictable (not compared)
	// Of the unpredictable flows, how many took the slave the hash would
	// pick without the socket's hash: chance, if they are unpredictable.
	asIf, asIfOK int
	ambiguous    int // flows whose egress could not be read
}

func printAgreement(t *testing.T, rows []agreement) {
	if len(rows) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "transmit hash: bondtop vs the kernel (tx_packets per slave)\n")
	fmt.Fprintf(&b, "%-33s %-11s", "bond", "policy")
	for _, k := range kindNames {
		fmt.Fprintf(&b, " %6s", k)
	}
	fmt.Fprintf(&b, " %5s %5s\n", "unpr.", "ambig")
	total, agree := 0, 0
	for _, r := range rows {
		fmt.Fprintf(&b, "%-33s %-11s", r.config, r.policy)
		for k := range numKinds {
			fmt.Fprintf(&b, " %6s", fmt.Sprintf("%d/%d", r.ok[k], r.n[k]))
			total += r.n[k]
			agree += r.ok[k]
		}
		fmt.Fprintf(&b, " %5d %5d", r.unpredictable, r.ambiguous)
		if r.asIf > 0 {
			fmt.Fprintf(&b, "  (unpredictable ones on the no-socket-hash slave: %d/%d)", r.asIfOK, r.asIf)
		}
		b.WriteByte('\n')
	}
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(agree) / float64(total)
	}
	fmt.Fprintf(&b, "agreement: %d of %d flows (%.2f%%)", agree, total, pct)
	for _, line := range strings.Split(b.String(), "\n") {
		t.Log(line)
	}
	Measure(t, "hash_agreement", pct, "%")
}

// The flows of one run: half IPv4, half IPv6.
const (
	hashFlows   = 160
	hashPackets = 8 // datagrams per flow; the egress is the slave that moved by at least this
	hashNeigh   = 24
)

// hashLab is a bond with addresses and made-up neighbours, ready to send.
type hashLab struct {
	p          *Pair
	local4     netip.Addr
	local6     netip.Addr
	dst4, dst6 []netip.Addr
	macs       map[netip.Addr][6]byte
	changeMAC  bool // vary the bond's MAC between batches
	rng        *rand.Rand
}

func newHashLab(t *testing.T, p *Pair, subnet int, changeMAC bool) *hashLab {
	t.Helper()
	l := &hashLab{p: p, macs: map[netip.Addr][6]byte{}, changeMAC: changeMAC, rng: rand.New(rand.NewPCG(uint64(subnet), 42))}
	l.local4 = netip.AddrFrom4([4]byte{198, 18, byte(subnet), 1})
	l.local6 = netip.MustParseAddr(fmt.Sprintf("2001:db8:%x::1", subnet))
	bond := p.Root.Link(t, p.Bond)
	p.Root.Addr(t, p.Bond, l.local4.String()+"/24")
	// No duplicate address detection: the address is usable at once.
	a6, _ := netlink.ParseAddr(l.local6.String() + "/64")
	a6.Flags = unix.IFA_F_NODAD
	if err := p.Root.NL.AddrAdd(bond, a6); err != nil {
		t.Fatalf("address %s: %v", l.local6, err)
	}
	for i := range hashNeigh {
		d4 := netip.AddrFrom4([4]byte{198, 18, byte(subnet), byte(10 + i)})
		d6 := netip.MustParseAddr(fmt.Sprintf("2001:db8:%x::%x", subnet, 10+i))
		l.macs[d4], l.macs[d6] = l.randomMAC(), l.randomMAC()
		l.dst4 = append(l.dst4, d4)
		l.dst6 = append(l.dst6, d6)
	}
	l.neighbours(t)
	return l
}

// neighbours (re)writes the permanent neighbour entries: a change of the
// bond's MAC address flushes them all, permanent ones included.
func (l *hashLab) neighbours(t *testing.T) {
	t.Helper()
	idx := l.p.Root.Link(t, l.p.Bond).Attrs().Index
	for d, mac := range l.macs {
		fam := netlink.FAMILY_V4
		if d.Is6() {
			fam = netlink.FAMILY_V6
		}
		n := &netlink.Neigh{LinkIndex: idx, Family: fam, State: netlink.NUD_PERMANENT,
			IP: net.IP(d.AsSlice()), HardwareAddr: net.HardwareAddr(mac[:])}
		if err := l.p.Root.NL.NeighSet(n); err != nil {
			t.Fatalf("neighbour %s: %v", d, err)
		}
	}
}

// randomMAC is a locally administered unicast address.
func (l *hashLab) randomMAC() [6]byte {
	var m [6]byte
	v := l.rng.Uint64()
	for i := range m {
		m[i] = byte(v >> (8 * i))
	}
	m[0] = m[0]&0xfc | 0x02
	return m
}

// predictor reads the bond as bondtop's live source sees it now and builds
// the Predictor `bondtop hash` would use.
func (l *hashLab) predictor(t *testing.T, k bonding.KernelVersion, policy string) *bonding.Predictor {
	t.Helper()
	src, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r, err := src.Read()
	if err != nil {
		t.Fatal(err)
	}
	b := r.Bond(l.p.Bond)
	if b == nil {
		t.Fatalf("bondtop does not see %s", l.p.Bond)
	}
	if b.XmitHashPolicy == nil || !strings.HasPrefix(*b.XmitHashPolicy, policy) {
		t.Fatalf("bondtop reads xmit_hash_policy %s, the kernel has %s", Show(b.XmitHashPolicy), Sysfs(t, l.p.Bond, "bonding/xmit_hash_policy"))
	}
	pred, err := bonding.NewPredictor(b, k)
	if err != nil {
		t.Fatal(err)
	}
	return pred
}

// run sets policy, sends hashFlows flows and compares.
func (l *hashLab) run(t *testing.T, k bonding.KernelVersion, config, policy string) agreement {
	t.Helper()
	row := agreement{config: config, policy: policy}
	path := "/sys/class/net/" + l.p.Bond + "/bonding/xmit_hash_policy"
	if err := os.WriteFile(path, []byte(policy), 0); err != nil {
		t.Fatalf("setting xmit_hash_policy %s: %v", policy, err)
	}
	pred := l.predictor(t, k, policy)
	var miss []string
	var srcMAC [6]byte
flows:
	for i := range hashFlows {
		if i%(hashFlows/4) == 0 {
			if l.changeMAC {
				m := l.randomMAC()
				if err := l.p.Root.NL.LinkSetHardwareAddr(l.p.Root.Link(t, l.p.Bond), net.HardwareAddr(m[:])); err != nil {
					t.Fatalf("bond MAC: %v", err)
				}
				l.neighbours(t)
			}
			copy(srcMAC[:], l.p.Root.Link(t, l.p.Bond).Attrs().HardwareAddr)
		}
		kind := i % numKinds
		six := kind == kindUDP6 || kind == kindEcho6 || kind == kindFrag6
		f := bonding.Flow{SrcMAC: srcMAC, Proto: bonding.ProtoUDP,
			SrcPort: uint16(1024 + l.rng.IntN(60000)), DstPort: uint16(1 + l.rng.IntN(65534))}
		if six {
			f.Src, f.Dst = l.local6, l.dst6[l.rng.IntN(len(l.dst6))]
			// Local IPv6 packets carry a hash from the automatic flow
			// label (net.ipv6.auto_flowlabels), which encap3+4 uses.
			f.L4Hash = true
		} else {
			f.Src, f.Dst = l.local4, l.dst4[l.rng.IntN(len(l.dst4))]
		}
		switch kind {
		case kindEcho4, kindEcho6:
			f.Proto, f.ICMPType, f.SrcPort, f.DstPort = bonding.ProtoICMP, 8, 0, 0
			if six {
				f.Proto, f.ICMPType = bonding.ProtoICMPv6, 128
			}
			f.ICMPID = uint16(l.rng.Uint32())
		case kindFrag4, kindFrag6:
			f.Fragment = true
		}
		f.DstMAC = l.macs[f.Dst]
		c, err := pred.Predict(&f)
		if err != nil {
			t.Fatalf("predict %v: %v", f, err)
		}
		if c.Outcome == bonding.Unpredictable {
			row.unpredictable++
			// Still send, against the prediction without the socket's
			// hash: were the kernel not using it, they would agree.
			g := f
			g.L4Hash = false
			if c2, err := pred.Predict(&g); err == nil && c2.Outcome == bonding.Hashed {
				if got, _ := l.egress(t, &g, kind); got != "" {
					row.asIf++
					if got == c2.Slave {
						row.asIfOK++
					}
				}
			}
			continue
		}
		got, deltas := l.egress(t, &f, kind)
		if got == "" {
			row.ambiguous++
			miss = append(miss, fmt.Sprintf("%s %s:%d -> %s:%d: egress unclear, tx_packets deltas %v", kindNames[kind], f.Src, f.SrcPort, f.Dst, f.DstPort, deltas))
			if row.ambiguous >= 10 && row.n == [numKinds]int{} {
				// Nothing leaves as expected: no point in going on.
				t.Errorf("%s %s: no flow's egress could be read; giving up on this run", config, policy)
				break flows
			}
			continue
		}
		row.n[kind]++
		if got == c.Slave {
			row.ok[kind]++
			continue
		}
		miss = append(miss, fmt.Sprintf("%s %s:%d -> %s:%d id %d (dst %s, src %s): kernel %s, bondtop %s (%s, hash %#x %% %d)",
			kindNames[kind], f.Src, f.SrcPort, f.Dst, f.DstPort, f.ICMPID, net.HardwareAddr(f.DstMAC[:]), net.HardwareAddr(f.SrcMAC[:]), got, c.Slave, c.Outcome, c.Hash, c.Count))
	}
	if len(miss) > 0 {
		for _, m := range miss[:min(len(miss), 8)] {
			t.Errorf("%s %s: %s", config, policy, m)
		}
		if len(miss) > 8 {
			t.Errorf("%s %s: and %d more", config, policy, len(miss)-8)
		}
	}
	return row
}

// egress sends hashPackets packets of flow f (datagrams, echo requests, or
// datagrams too big for the MTU) and returns the slave whose tx_packets
// moved by at least that much, "" when not exactly one did, twice (LACPDUs
// and neighbour discovery add a packet here and there).
func (l *hashLab) egress(t *testing.T, f *bonding.Flow, kind int) (string, []uint64) {
	t.Helper()
	send, done := l.sender(t, f, kind)
	defer done()
	var deltas []uint64
	for range 2 {
		before := Counters(t, "tx_packets", l.p.Slaves...)
		for range hashPackets {
			if err := send(); err != nil {
				t.Fatalf("send %s to %s: %v", kindNames[kind], f.Dst, err)
			}
		}
		// veth may count a packet when its peer's NAPI poll takes it, a
		// moment after the send returned: wait until they all show.
		deadline := time.Now().Add(300 * time.Millisecond)
		for {
			after := Counters(t, "tx_packets", l.p.Slaves...)
			deltas = make([]uint64, len(after))
			var sum uint64
			for i := range after {
				deltas[i] = after[i] - before[i]
				sum += deltas[i]
			}
			if sum >= hashPackets || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		got := ""
		n := 0
		for i, d := range deltas {
			if d >= hashPackets {
				got = l.p.Slaves[i]
				n++
			}
		}
		if n == 1 {
			return got, deltas
		}
	}
	return "", deltas
}

// sender opens the socket for one flow and returns a function that sends
// one packet of it, and one that closes the socket.
func (l *hashLab) sender(t *testing.T, f *bonding.Flow, kind int) (send func() error, done func()) {
	t.Helper()
	switch kind {
	case kindEcho4, kindEcho6:
		network := "ip4:icmp"
		if kind == kindEcho6 {
			network = "ip6:ipv6-icmp"
		}
		conn, err := net.ListenIP(network, &net.IPAddr{IP: f.Src.AsSlice()})
		if err != nil {
			t.Fatalf("raw socket %s on %s: %v", network, f.Src, err)
		}
		msg := make([]byte, 8+24)
		msg[0] = f.ICMPType
		msg[4], msg[5] = byte(f.ICMPID>>8), byte(f.ICMPID)
		if kind == kindEcho4 {
			// ICMPv4 raw sockets send the checksum as given; the kernel
			// fills ICMPv6's.
			sum := icmpChecksum(msg)
			msg[2], msg[3] = byte(sum>>8), byte(sum)
		}
		dst := &net.IPAddr{IP: f.Dst.AsSlice()}
		return func() error { _, err := conn.WriteToIP(msg, dst); return err }, func() { conn.Close() }
	}
	network := "udp4"
	if f.Src.Is6() {
		network = "udp6"
	}
	// An unconnected socket: a connected one gets a socket hash
	// (sk_txhash), which encap3+4 would use.
	conn, err := net.ListenUDP(network, net.UDPAddrFromAddrPort(netip.AddrPortFrom(f.Src, f.SrcPort)))
	if err != nil {
		t.Fatalf("bind %s:%d: %v", f.Src, f.SrcPort, err)
	}
	size := 32
	if kind == kindFrag4 || kind == kindFrag6 {
		size = 3000 // three fragments at MTU 1500
	}
	payload := make([]byte, size)
	dst := netip.AddrPortFrom(f.Dst, f.DstPort)
	return func() error { _, err := conn.WriteToUDPAddrPort(payload, dst); return err }, func() { conn.Close() }
}

// icmpChecksum is the Internet checksum of b.
func icmpChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}
