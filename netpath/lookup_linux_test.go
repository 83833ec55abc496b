//go:build linux

package netpath

import (
	"net"
	"net/netip"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestLookupPath runs the route and neighbour lookup of live mode in a
// network namespace of its own: a veth stands in for the bond (the lookup
// only needs the route's device), with a neighbour on the link and a
// gateway for everything else. It needs CAP_NET_ADMIN and skips without.
func TestLookupPath(t *testing.T) {
	// The namespace belongs to this thread, which dies with the test's
	// goroutine instead of returning to the pool.
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		t.Skipf("no network namespace (%v): needs CAP_NET_ADMIN", err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "bond9"}, PeerName: "far9"}))
	bond, err := netlink.LinkByName("bond9")
	must(err)
	far, err := netlink.LinkByName("far9")
	must(err)
	must(netlink.LinkSetUp(bond))
	must(netlink.LinkSetUp(far))
	a4, _ := netlink.ParseAddr("10.9.0.1/24")
	must(netlink.AddrAdd(bond, a4))
	a6, _ := netlink.ParseAddr("2001:db8:9::1/64")
	a6.Flags = unix.IFA_F_NODAD
	must(netlink.AddrAdd(bond, a6))
	peerMAC, _ := net.ParseMAC("02:00:00:00:00:50")
	gwMAC, _ := net.ParseMAC("02:00:00:00:00:fe")
	for _, n := range []struct {
		ip  string
		mac net.HardwareAddr
	}{{"10.9.0.50", peerMAC}, {"10.9.0.254", gwMAC}, {"2001:db8:9::50", peerMAC}} {
		fam := netlink.FAMILY_V4
		if strings.Contains(n.ip, ":") {
			fam = netlink.FAMILY_V6
		}
		must(netlink.NeighAdd(&netlink.Neigh{LinkIndex: bond.Attrs().Index, Family: fam, State: netlink.NUD_PERMANENT,
			IP: net.ParseIP(n.ip), HardwareAddr: n.mac}))
	}
	must(netlink.RouteAdd(&netlink.Route{Gw: net.ParseIP("10.9.0.254")}))

	bondMAC := [6]byte(bond.Attrs().HardwareAddr)
	for _, tt := range []struct {
		dst, src, hop string
		mac           net.HardwareAddr
	}{
		{"10.9.0.50", "10.9.0.1", "10.9.0.50", peerMAC},
		{"192.0.2.7", "10.9.0.1", "10.9.0.254", gwMAC},
		{"2001:db8:9::50", "2001:db8:9::1", "2001:db8:9::50", peerMAC},
		{"10.9.0.77", "10.9.0.1", "10.9.0.77", nil}, // no neighbour entry yet
	} {
		p, err := Lookup("bond9", netip.MustParseAddr(tt.dst))
		if err != nil {
			t.Errorf("%s: %v", tt.dst, err)
			continue
		}
		if p.Dev != "bond9" || p.Src.String() != tt.src || p.NextHop.String() != tt.hop || p.SrcMAC != bondMAC {
			t.Errorf("%s: path %+v, want source %s, next hop %s", tt.dst, p, tt.src, tt.hop)
		}
		if p.HaveDstMAC != (tt.mac != nil) || (tt.mac != nil && p.DstMAC != [6]byte(tt.mac)) {
			t.Errorf("%s: next hop MAC %x (known %v), want %v", tt.dst, p.DstMAC, p.HaveDstMAC, tt.mac)
		}
	}
	if _, err := Lookup("bond0", netip.MustParseAddr("10.9.0.50")); err == nil || !strings.Contains(err.Error(), "routed via bond9, not bond0") {
		t.Errorf("another bond: %v", err)
	}
	if _, err := Lookup("bond9", netip.MustParseAddr("2001:db8:77::1")); err == nil {
		t.Error("no IPv6 route: no error")
	}

	// A VLAN interface on the bond: its frames leave through the bond with
	// the VLAN id for the hash.
	vlan := &netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "bond9.100", ParentIndex: bond.Attrs().Index}, VlanId: 100}
	if err := netlink.LinkAdd(vlan); err != nil {
		t.Logf("no VLAN interface (8021q not loaded?): %v; VLAN path not checked", err)
		return
	}
	v, err := netlink.LinkByName("bond9.100")
	must(err)
	must(netlink.LinkSetUp(v))
	av, _ := netlink.ParseAddr("10.100.0.1/24")
	must(netlink.AddrAdd(v, av))
	must(netlink.NeighAdd(&netlink.Neigh{LinkIndex: v.Attrs().Index, Family: netlink.FAMILY_V4, State: netlink.NUD_PERMANENT,
		IP: net.ParseIP("10.100.0.9"), HardwareAddr: peerMAC}))
	p, err := Lookup("bond9", netip.MustParseAddr("10.100.0.9"))
	if err != nil || p.Dev != "bond9.100" || p.VLAN != 100 || !p.HaveDstMAC || p.Src.String() != "10.100.0.1" {
		t.Errorf("via VLAN: %+v, %v", p, err)
	}
}
