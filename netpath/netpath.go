// Package netpath asks the host how it would send to an address: the
// route's device (a bond, or a VLAN interface on one), the source address,
// the next hop and its MAC. The transmit hash reads all of these, so
// `bondtop hash`, `bondtop load` and the dashboard's load panel share this
// lookup. The flow table (collector) batches its own for thousands of
// sockets at a time.
package netpath

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// Path is what the routing table and the neighbour table say about a
// destination: how this host would send to it.
type Path struct {
	Dev     string     // the route's device: the bond or a VLAN on it
	VLAN    uint16     // the VLAN id when Dev is a VLAN on the bond
	Src     netip.Addr // the source address the kernel picks
	NextHop netip.Addr // the gateway, or the destination itself
	SrcMAC  [6]byte
	DstMAC  [6]byte
	// HaveDstMAC is false when the next hop has no neighbour entry.
	HaveDstMAC bool
}

// EphemeralPorts is net.ipv4.ip_local_port_range (also IPv6's), or the
// kernel's default: the ports the kernel picks from, and so the ports a
// planned stream can use without colliding with a listener.
func EphemeralPorts() (int, int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			lo, err1 := strconv.Atoi(f[0])
			hi, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && lo > 0 && lo <= hi && hi <= 65535 {
				return lo, hi
			}
		}
	}
	return 32768, 60999
}

// Nudge sends one datagram to dst:port so the kernel resolves the next
// hop's MAC (a layer2 hash needs it before anything was sent), then waits
// a moment for the answer. It blocks for about 200ms: never call it on a
// UI's event loop.
func Nudge(dst netip.Addr, port uint16) {
	c, err := net.DialTimeout("udp", netip.AddrPortFrom(dst, port).String(), time.Second)
	if err != nil {
		return
	}
	_, _ = c.Write([]byte{0})
	c.Close()
	time.Sleep(200 * time.Millisecond)
}
