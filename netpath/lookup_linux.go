//go:build linux

package netpath

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// Lookup asks the kernel how it would send to dst (RTM_GETROUTE, as
// `ip route get` does) and which MAC the next hop has (the neighbour
// table). The route must leave through bond or a VLAN interface on it.
func Lookup(bond string, dst netip.Addr) (Path, error) {
	var p Path
	routes, err := netlink.RouteGet(net.IP(dst.AsSlice()))
	if err != nil {
		return p, fmt.Errorf("route to %s: %w", dst, err)
	}
	if len(routes) == 0 {
		return p, fmt.Errorf("no route to %s", dst)
	}
	r := routes[0]
	link, err := netlink.LinkByIndex(r.LinkIndex)
	if err != nil {
		return p, fmt.Errorf("route to %s: interface %d: %w", dst, r.LinkIndex, err)
	}
	p.Dev = link.Attrs().Name
	if p.Dev != bond {
		// A VLAN interface on the bond hands its frames to the bond with
		// the tag in the socket buffer.
		v, ok := link.(*netlink.Vlan)
		parent := ""
		if ok {
			if pl, err := netlink.LinkByIndex(v.ParentIndex); err == nil {
				parent = pl.Attrs().Name
			}
		}
		if parent != bond {
			return p, fmt.Errorf("%s is routed via %s, not %s: this bond does not carry that flow", dst, p.Dev, bond)
		}
		p.VLAN = uint16(v.VlanId)
	}
	// netlink hands IPv4 addresses over in 4 or 16 bytes.
	fam := func(a netip.Addr) netip.Addr {
		if dst.Is4() {
			return a.Unmap()
		}
		return a
	}
	if a, ok := netip.AddrFromSlice(r.Src); ok {
		p.Src = fam(a)
	}
	if !p.Src.IsValid() {
		return p, fmt.Errorf("route to %s gives no source address: give one with --src", dst)
	}
	p.NextHop = dst
	if a, ok := netip.AddrFromSlice(r.Gw); ok {
		p.NextHop = fam(a)
	}
	copy(p.SrcMAC[:], link.Attrs().HardwareAddr)

	family := netlink.FAMILY_V4
	if dst.Is6() {
		family = netlink.FAMILY_V6
	}
	neighs, err := netlink.NeighList(r.LinkIndex, family)
	if err != nil {
		return p, fmt.Errorf("neighbours of %s: %w", p.Dev, err)
	}
	const known = netlink.NUD_REACHABLE | netlink.NUD_STALE | netlink.NUD_DELAY | netlink.NUD_PROBE | netlink.NUD_PERMANENT | netlink.NUD_NOARP
	for _, n := range neighs {
		a, ok := netip.AddrFromSlice(n.IP)
		if !ok || fam(a) != p.NextHop || len(n.HardwareAddr) != 6 || n.State&known == 0 {
			continue
		}
		copy(p.DstMAC[:], n.HardwareAddr)
		p.HaveDstMAC = true
		break
	}
	return p, nil
}
