//go:build linux

package flowmeter

import (
	"net"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// vethLab is two network namespaces joined by a veth pair: "fm0" here (the
// slave the meter watches: this host has no bonding driver), "fmpeer" in
// the peer namespace. The test's goroutine stays locked to a thread in
// "here" for its whole life.
type vethLab struct {
	here, peer        netns.NsHandle
	ifindex           int
	ownMAC, peerMAC   [6]byte
	own4, peer4       netip.Addr
	own6, peer6       netip.Addr
	peerLink, ownLink string
}

// needRoot skips without root, except under CI, where the meter must be
// tested for real.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the flow meter tests need root (CI runs as root)")
		}
		t.Skip("needs root: network namespaces, veth and eBPF")
	}
}

func newVethLab(t testing.TB) *vethLab {
	t.Helper()
	needRoot(t)
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	here, err := netns.New()
	if err != nil {
		t.Fatalf("new network namespace: %v", err)
	}
	l := &vethLab{here: here, ownLink: "fm0", peerLink: "fmpeer",
		own4: netip.MustParseAddr("10.8.0.1"), peer4: netip.MustParseAddr("10.8.0.2"),
		own6: netip.MustParseAddr("fd00:8::1"), peer6: netip.MustParseAddr("fd00:8::2")}
	t.Cleanup(func() {
		here.Close()
		if l.peer.IsOpen() {
			l.peer.Close()
		}
		if err := netns.Set(orig); err != nil {
			t.Errorf("restore network namespace: %v", err)
			return
		}
		orig.Close()
		runtime.UnlockOSThread()
	})
	// Quiet links: no router solicitations or DAD.
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/default/accept_dad", []byte("0"), 0)
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/default/router_solicitations", []byte("0"), 0)
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: l.ownLink}, PeerName: l.peerLink}); err != nil {
		t.Fatalf("add veth: %v", err)
	}
	l.peer, err = netns.New()
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/default/accept_dad", []byte("0"), 0)
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/default/router_solicitations", []byte("0"), 0)
	l.setns(t, l.here)
	pl := l.link(t, l.peerLink)
	if err := netlink.LinkSetNsFd(pl, int(l.peer)); err != nil {
		t.Fatal(err)
	}
	a := l.up(t, l.ownLink, "10.8.0.1/24", "fd00:8::1/64")
	l.ifindex = a.Attrs().Index
	copy(l.ownMAC[:], a.Attrs().HardwareAddr)
	l.up(t, "lo")
	l.inPeer(t, func() {
		p := l.up(t, l.peerLink, "10.8.0.2/24", "fd00:8::2/64")
		copy(l.peerMAC[:], p.Attrs().HardwareAddr)
		l.up(t, "lo")
	})
	// Both ends must carry traffic before a test counts it.
	deadline := time.Now().Add(5 * time.Second)
	for l.link(t, l.ownLink).Attrs().OperState != netlink.OperUp {
		if time.Now().After(deadline) {
			t.Fatal("fm0 did not come up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return l
}

func (l *vethLab) setns(t testing.TB, ns netns.NsHandle) {
	t.Helper()
	if err := netns.Set(ns); err != nil {
		t.Fatal(err)
	}
}

func (l *vethLab) link(t testing.TB, name string) netlink.Link {
	t.Helper()
	lk, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return lk
}

func (l *vethLab) up(t testing.TB, name string, addrs ...string) netlink.Link {
	t.Helper()
	lk := l.link(t, name)
	for _, s := range addrs {
		a, err := netlink.ParseAddr(s)
		if err != nil {
			t.Fatal(err)
		}
		a.Flags = unix.IFA_F_NODAD
		if err := netlink.AddrAdd(lk, a); err != nil {
			t.Fatalf("%s %s: %v", name, s, err)
		}
	}
	if err := netlink.LinkSetUp(lk); err != nil {
		t.Fatal(err)
	}
	return l.link(t, name)
}

// inPeer runs fn in the peer namespace; sockets made there stay there.
func (l *vethLab) inPeer(t testing.TB, fn func()) {
	t.Helper()
	l.setns(t, l.peer)
	defer l.setns(t, l.here)
	fn()
}

// counters are fm0's own byte and packet counters.
func (l *vethLab) counters(t testing.TB) *netlink.LinkStatistics {
	t.Helper()
	return l.link(t, l.ownLink).Attrs().Statistics
}

// udpFlows sends n datagrams of size bytes on each of flows UDP flows from
// fm0 to the peer, each from its own source port to port 9000+i, through
// unconnected sockets (a connected one would swallow the next datagram to
// report the peer's port unreachable). It returns the source ports.
func (l *vethLab) udpFlows(t testing.TB, peer netip.Addr, flows, n, size int) []uint16 {
	t.Helper()
	var ports []uint16
	payload := make([]byte, size)
	for i := range flows {
		c, err := net.ListenUDP("udp", nil)
		if err != nil {
			t.Fatal(err)
		}
		dst := net.UDPAddrFromAddrPort(netip.AddrPortFrom(peer, uint16(9000+i)))
		for range n {
			if _, err := c.WriteToUDP(payload, dst); err != nil {
				t.Fatal(err)
			}
		}
		ports = append(ports, uint16(c.LocalAddr().(*net.UDPAddr).Port))
		c.Close()
	}
	return ports
}
