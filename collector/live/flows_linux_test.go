//go:build linux

package live

import (
	"io"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
)

// flowLab is two network namespaces joined by a veth pair: "vbond0" here
// (it stands in for a bond: this host has no bonding driver, so the flows
// are predicted for a synthetic bond of that name), "vpeer" in the peer
// namespace, with IPv4, IPv6, a VLAN and a routed prefix behind the peer.
type flowLab struct {
	here, peer netns.NsHandle
	peerMAC    [6]byte
	ownMAC     [6]byte
	vlan       bool // the kernel has 802.1Q (8021q)
}

func newFlowLab(t testing.TB) *flowLab {
	t.Helper()
	inNewNetns(t)
	here, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { here.Close() })
	a, b := addVeth(t, "vbond0", "vpeer", 1500)
	peer, err := netns.New() // the thread is now in peer
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	if err := netns.Set(here); err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkSetNsFd(b, int(peer)); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/vbond0/disable_ipv6", []byte("0"), 0)
	vlanHere := &netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "vbond0.100", ParentIndex: a.Attrs().Index}, VlanId: 100}
	l := &flowLab{here: here, peer: peer, vlan: true}
	if err := netlink.LinkAdd(vlanHere); err != nil {
		t.Logf("no VLAN flows: %v (8021q missing)", err)
		l.vlan = false
	}
	copy(l.ownMAC[:], a.Attrs().HardwareAddr)
	setup := func(link string, addrs ...string) {
		t.Helper()
		lk, err := netlink.LinkByName(link)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range addrs {
			addr, err := netlink.ParseAddr(s)
			if err != nil {
				t.Fatal(err)
			}
			addr.Flags = unix.IFA_F_NODAD
			if err := netlink.AddrAdd(lk, addr); err != nil {
				t.Fatalf("%s %s: %v", link, s, err)
			}
		}
		if err := netlink.LinkSetUp(lk); err != nil {
			t.Fatal(err)
		}
	}
	setup("lo")
	setup("vbond0", "10.9.0.1/24", "fd00:9::1/64")
	if l.vlan {
		setup("vbond0.100", "10.100.0.1/24")
	}
	// 10.77.0.0/24 lies behind the peer: the next hop is 10.9.0.2.
	if err := netlink.RouteAdd(&netlink.Route{LinkIndex: a.Attrs().Index, Dst: mustPrefix("10.77.0.0/24"), Gw: net.ParseIP("10.9.0.2")}); err != nil {
		t.Fatal(err)
	}

	if err := netns.Set(peer); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := netns.Set(here); err != nil {
			t.Fatal(err)
		}
	}()
	pl, err := netlink.LinkByName("vpeer")
	if err != nil {
		t.Fatal(err)
	}
	copy(l.peerMAC[:], pl.Attrs().HardwareAddr)
	setup("lo", "10.77.0.1/32")
	setup("vpeer", "10.9.0.2/24", "fd00:9::2/64")
	if l.vlan {
		if err := netlink.LinkAdd(&netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "vpeer.100", ParentIndex: pl.Attrs().Index}, VlanId: 100}); err != nil {
			t.Fatal(err)
		}
		setup("vpeer.100", "10.100.0.2/24")
	}
	waitOperState(t, "vpeer", netlink.OperUp)
	return l
}

func mustPrefix(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

// inPeer runs fn with the thread in the peer namespace (sockets made
// there stay there).
func (l *flowLab) inPeer(t testing.TB, fn func()) {
	t.Helper()
	if err := netns.Set(l.peer); err != nil {
		t.Fatal(err)
	}
	fn()
	if err := netns.Set(l.here); err != nil {
		t.Fatal(err)
	}
}

// sink accepts connections and reads them to the end.
func sink(t testing.TB, ln net.Listener) {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()
}

// syntheticBond is a bond called name over two slaves, both up.
func syntheticBond(name, mode, policy string, slaves ...string) bonding.Bond {
	b := bonding.Bond{Name: name, Mode: new(mode), XmitHashPolicy: new(policy), MIIStatus: new("up")}
	for _, s := range slaves {
		b.Slaves = append(b.Slaves, bonding.Slave{Name: s, MIIStatus: new("up"), State: new("active"), OperState: new("up")})
	}
	return b
}

// TestLiveFlowsVeth opens real TCP and UDP sockets, IPv4 and IPv6, direct,
// through a VLAN and through a gateway, reads them back with Flows and
// checks each flow's path, byte counts and predicted slave against the
// hash computed here from what the test knows.
func TestLiveFlowsVeth(t *testing.T) {
	l := newFlowLab(t)
	l.inPeer(t, func() {
		addrs := []string{"10.9.0.2:5001", "[fd00:9::2]:5001", "10.77.0.1:5001"}
		if l.vlan {
			addrs = append(addrs, "10.100.0.2:5001")
		}
		for _, addr := range addrs {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			sink(t, ln)
		}
		u, err := net.ListenPacket("udp", "10.9.0.2:5002")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { u.Close() })
	})

	const payload = 200_000
	type want struct {
		remote  string
		proto   uint8
		vlan    uint16
		nextHop string
		bytes   bool
	}
	wants := []want{
		{"10.9.0.2:5001", bonding.ProtoTCP, 0, "10.9.0.2", true},
		{"[fd00:9::2]:5001", bonding.ProtoTCP, 0, "fd00:9::2", true},
		{"10.77.0.1:5001", bonding.ProtoTCP, 0, "10.9.0.2", true},
		{"10.9.0.2:5002", bonding.ProtoUDP, 0, "10.9.0.2", false},
	}
	if l.vlan {
		wants = append(wants, want{"10.100.0.2:5001", bonding.ProtoTCP, 100, "10.100.0.2", true})
	}
	tcpFlows := 0
	for _, w := range wants {
		if w.proto == bonding.ProtoTCP {
			tcpFlows++
		}
	}
	for _, w := range wants {
		network := "tcp"
		if w.proto == bonding.ProtoUDP {
			network = "udp"
		}
		c, err := net.Dial(network, w.remote)
		if err != nil {
			t.Fatalf("dial %s: %v", w.remote, err)
		}
		t.Cleanup(func() { c.Close() })
		if w.proto == bonding.ProtoTCP {
			if _, err := c.Write(make([]byte, payload)); err != nil {
				t.Fatal(err)
			}
		} else if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	// A loopback connection crosses no bond.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sink(t, ln)
	lc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()

	lf, err := NewFlows()
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	var fr collector.FlowReading
	deadline := time.Now().Add(3 * time.Second)
	for {
		fr, err = lf.ReadFlows()
		if err != nil {
			t.Fatal(err)
		}
		acked := 0
		for _, s := range fr.Sockets {
			if s.HaveBytes && s.TxBytes >= payload && s.Path.Bond == "vbond0" {
				acked++
			}
		}
		if acked == tcpFlows || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}

	bond := syntheticBond("vbond0", bonding.ModeXOR, "layer2+3", "eth0", "eth1", "eth2")
	tab := collector.BuildFlowTable(&bond, fr.Kernel, time.Now(), 0, fr.Sockets)
	pred, err := bonding.NewPredictor(&bond, fr.Kernel)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wants {
		remote := netip.MustParseAddrPort(w.remote)
		var f *model.Flow
		for i := range tab.Flows {
			if tab.Flows[i].Remote == remote && tab.Flows[i].Proto == w.proto {
				f = &tab.Flows[i]
			}
		}
		if f == nil {
			t.Errorf("%s: no flow in %+v", w.remote, fr.Sockets)
			continue
		}
		if f.Path.Bond != "vbond0" || f.Path.VLAN != w.vlan || f.Path.NextHop != netip.MustParseAddr(w.nextHop) {
			t.Errorf("%s: path %+v, want bond vbond0 vlan %d next hop %s", w.remote, f.Path, w.vlan, w.nextHop)
		}
		if !f.Path.HaveDstMAC || f.Path.SrcMAC != l.ownMAC {
			t.Errorf("%s: MACs %+v, want src %x and a known next hop", w.remote, f.Path, l.ownMAC)
		}
		if w.vlan == 0 && f.Path.DstMAC != l.peerMAC {
			t.Errorf("%s: next hop MAC %x, want the peer's %x", w.remote, f.Path.DstMAC, l.peerMAC)
		}
		if w.bytes && (!f.HaveBytes || f.TxBytes < payload) {
			t.Errorf("%s: tx bytes %d (have %v), want >= %d", w.remote, f.TxBytes, f.HaveBytes, payload)
		}
		if !w.bytes && f.HaveBytes {
			t.Errorf("%s: UDP socket with byte counts", w.remote)
		}
		// The hash the kernel computes for this socket's packets.
		pkt := bonding.Flow{SrcMAC: l.ownMAC, DstMAC: f.Path.DstMAC, VLAN: w.vlan, Src: f.Local.Addr(), Dst: remote.Addr(),
			Proto: w.proto, SrcPort: f.Local.Port(), DstPort: remote.Port(), L4Hash: true}
		c, err := pred.Predict(&pkt)
		if err != nil {
			t.Fatal(err)
		}
		if f.Choice.Slave != c.Slave || f.Choice.Outcome != bonding.Hashed {
			t.Errorf("%s: predicted %+v, want %s", w.remote, f.Choice, c.Slave)
		}
	}
	for _, s := range fr.Sockets {
		if s.Remote.Addr().IsLoopback() && s.Path.Bond != "" {
			t.Errorf("loopback socket %v has a path %+v", s.Remote, s.Path)
		}
	}
	sum := 0
	for _, s := range tab.Slaves {
		sum += s.Flows
	}
	if sum != len(wants) || len(tab.Flows) != len(wants) {
		t.Errorf("table has %d flows, %d on slaves; want %d", len(tab.Flows), sum, len(wants))
	}
}

// BenchmarkLiveFlowsRead10k is a whole flow-table refresh on a host with
// ten thousand sockets that cross the (stand-in) bond: 4,000 TCP
// connections and 6,000 connected UDP sockets to 6,000 addresses behind
// a gateway. Each op dumps the sockets (sock_diag, IPv4 and IPv6, TCP and
// UDP), dumps links, addresses and neighbours, resolves each socket's
// route from the cache, and builds the table with a prediction per socket.
// The route cache is warmed first; a cold read is reported once.
func BenchmarkLiveFlowsRead10k(b *testing.B) {
	l := newFlowLab(b)
	l.inPeer(b, func() {
		ln, err := net.Listen("tcp", "10.9.0.2:5001")
		if err != nil {
			b.Fatal(err)
		}
		sink(b, ln)
	})
	lk, err := netlink.LinkByName("vbond0")
	if err != nil {
		b.Fatal(err)
	}
	if err := netlink.RouteAdd(&netlink.Route{LinkIndex: lk.Attrs().Index, Dst: mustPrefix("10.78.0.0/16"), Gw: net.ParseIP("10.9.0.2")}); err != nil {
		b.Fatal(err)
	}
	var conns []net.Conn
	b.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range 4000 {
		c, err := net.Dial("tcp", "10.9.0.2:5001")
		if err != nil {
			b.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	for i := range 6000 {
		c, err := net.Dial("udp", netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 78, byte(i >> 8), byte(i)}), 9).String())
		if err != nil {
			b.Fatalf("udp %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	lf, err := NewFlows()
	if err != nil {
		b.Fatal(err)
	}
	defer lf.Close()
	bond := syntheticBond("vbond0", bonding.Mode8023AD, "layer3+4", "eth0", "eth1", "eth2", "eth3")
	refresh := func() *model.FlowTable {
		fr, err := lf.ReadFlows()
		if err != nil {
			b.Fatal(err)
		}
		return collector.BuildFlowTable(&bond, fr.Kernel, time.Now(), 3, fr.Sockets)
	}
	start := time.Now()
	tab := refresh()
	b.Logf("cold read: %v, %d of 10000 flows routed (lookups spread over reads)", time.Since(start), len(tab.Flows))
	lf.lookupBudget = time.Minute
	if tab = refresh(); len(tab.Flows) != 10_000 {
		b.Fatalf("%d flows cross vbond0, want 10000", len(tab.Flows))
	}
	// Wall time suffers from whatever else the machine runs; the thread's
	// CPU time (user + system: the kernel's dump work) is the cost.
	b.ReportAllocs()
	cpu := threadCPU()
	for b.Loop() {
		tab = refresh()
	}
	b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	if len(tab.Flows) != 10_000 || tab.Unpredictable != 0 {
		b.Fatalf("%d flows, %d unpredictable", len(tab.Flows), tab.Unpredictable)
	}
}

// threadCPU is the calling thread's CPU time (the benchmark runs locked
// to its thread, in the lab's namespace).
func threadCPU() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
