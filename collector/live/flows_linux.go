//go:build linux

package live

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/hostfiles"
	"github.com/bondtop/bondtop/model"
)

// Flows reads this host's flows: a sock_diag dump of the connected TCP
// and UDP sockets (IPv4 and IPv6, with tcp_info byte counts), and for each
// destination the route (RTM_GETROUTE, cached) and the next hop's MAC (one
// neighbour dump per read). Sockets of other network namespaces
// (containers, VMs) are not seen: their traffic shows in the slaves'
// counters but in no flow.
type Flows struct {
	mu     sync.Mutex
	diag   int // NETLINK_SOCK_DIAG socket
	seq    uint32
	buf    []byte
	rt     *netlink.Handle
	kernel bonding.KernelVersion
	kWarn  string
	now    func() time.Time
	routes map[routeKey]routeEntry
	// lookupBudget bounds the time spent on route lookups per read: on a
	// host with ten thousand peers the first reads resolve part of them,
	// the following ones the rest (the cache holds them routeTTL).
	lookupBudget time.Duration
	// lastCount sizes the next read's slice: ten thousand sockets would
	// otherwise grow it a dozen times.
	lastCount int
}

var _ collector.FlowReader = (*Flows)(nil)

// routeTTL is how long a route lookup is trusted: routes change rarely,
// and a changed one shows within this time.
const routeTTL = 30 * time.Second

// defaultLookupBudget keeps a read within a few milliseconds of route
// lookups (one lookup costs about 20-40 µs).
const defaultLookupBudget = 8 * time.Millisecond

type routeKey struct {
	dst, src netip.Addr
	oif      uint32 // a link-local destination's interface
}

type routeEntry struct {
	at      time.Time
	ok      bool
	index   int
	nextHop netip.Addr
}

// NewFlows opens the sock_diag and rtnetlink sockets in the calling
// thread's network namespace. Close releases them.
func NewFlows() (*Flows, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("flow table: open sock_diag socket: %w", err)
	}
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &netlinkTimeout)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("flow table: bind sock_diag socket: %w", err)
	}
	rt, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("flow table: open rtnetlink socket: %w", err)
	}
	_ = rt.SetSocketTimeout(5 * time.Second)
	f := &Flows{diag: fd, buf: make([]byte, 64<<10), rt: rt, now: time.Now,
		routes: make(map[routeKey]routeEntry), lookupBudget: defaultLookupBudget}
	k, _, err := bonding.RunningKernel(os.DirFS("/"))
	if err != nil {
		f.kWarn = "flow table: " + err.Error() + "; predictions assume a current kernel"
		k = bonding.KernelVersion{Major: 6, Minor: 12}
	}
	f.kernel = k
	return f, nil
}

// Close releases the sockets.
func (f *Flows) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.diag >= 0 {
		unix.Close(f.diag)
		f.diag = -1
		f.rt.Close()
	}
	return nil
}

// ReadHost reads this host's /proc/sys.
func (s *Source) ReadHost() model.Host { return hostfiles.ReadHost(s.fsys) }

// The TCP states worth a flow: connected, or still sending. LISTEN,
// TIME_WAIT, CLOSE and request minisockets carry no data.
const tcpFlowStates = 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<8 | 1<<9 | 1<<11

// udpConnected: a connected UDP socket is in TCP_ESTABLISHED; an
// unconnected one sends anywhere and makes no flow.
const udpConnected = 1 << 1

var tcpStateNames = [...]string{"", "established", "syn-sent", "syn-recv", "fin-wait-1", "fin-wait-2",
	"time-wait", "close", "close-wait", "last-ack", "listen", "closing", "new-syn-recv"}

// ReadFlows implements collector.FlowReader.
func (f *Flows) ReadFlows() (collector.FlowReading, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.diag < 0 {
		return collector.FlowReading{}, errors.New("flow table closed")
	}
	fr := collector.FlowReading{Kernel: f.kernel, Sockets: make([]model.Socket, 0, f.lastCount+f.lastCount/8)}
	if f.kWarn != "" {
		fr.Warnings = append(fr.Warnings, f.kWarn)
	}
	for _, q := range [...]struct {
		family uint8
		proto  uint8
		states uint32
	}{
		{unix.AF_INET, unix.IPPROTO_TCP, tcpFlowStates},
		{unix.AF_INET6, unix.IPPROTO_TCP, tcpFlowStates},
		{unix.AF_INET, unix.IPPROTO_UDP, udpConnected},
		{unix.AF_INET6, unix.IPPROTO_UDP, udpConnected},
	} {
		var err error
		fr.Sockets, err = f.dump(fr.Sockets, q.family, q.proto, q.states)
		if err != nil {
			return collector.FlowReading{}, err
		}
	}
	f.lastCount = len(fr.Sockets)
	paths, err := f.newPathFinder()
	if err != nil {
		return collector.FlowReading{}, err
	}
	deadline := f.now().Add(f.lookupBudget)
	unresolved := 0
	for i := range fr.Sockets {
		s := &fr.Sockets[i]
		if !paths.resolve(f, s, deadline) {
			unresolved++
		}
	}
	if unresolved > 0 {
		fr.Warnings = append(fr.Warnings, fmt.Sprintf("flow table: %d sockets not routed yet (route lookups are spread over several reads)", unresolved))
	}
	f.expireRoutes()
	return fr, nil
}

func (f *Flows) expireRoutes() {
	now := f.now()
	if len(f.routes) < 4096 {
		return
	}
	for k, e := range f.routes {
		if now.Sub(e.at) >= routeTTL {
			delete(f.routes, k)
		}
	}
}

// dump appends the sockets of one family and protocol in the given states
// (an inet_diag_req_v2 dump asking for INET_DIAG_INFO).
func (f *Flows) dump(out []model.Socket, family, proto uint8, states uint32) ([]model.Socket, error) {
	f.seq++
	var req [16 + 56]byte
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], 20) // SOCK_DIAG_BY_FAMILY
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], f.seq)
	req[16], req[17] = family, proto
	req[18] = 1 << (2 - 1) // INET_DIAG_INFO
	ne.PutUint32(req[20:], states)
	if err := unix.Sendto(f.diag, req[:], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return out, fmt.Errorf("flow table: sock_diag request: %w", err)
	}
	for {
		n, _, err := unix.Recvfrom(f.diag, f.buf, 0)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return out, fmt.Errorf("flow table: sock_diag dump: %w", err)
		}
		done := false
		out, done, err = f.parseDump(out, f.buf[:n], proto)
		if err != nil || done {
			return out, err
		}
	}
}

// parseDump appends the sockets of one receive buffer; done is set at the
// end of the dump.
func (f *Flows) parseDump(out []model.Socket, b []byte, proto uint8) (_ []model.Socket, done bool, _ error) {
	ne := binary.NativeEndian
	for len(b) > 0 {
		h, msg, rest, err := nextMsg(b)
		if err != nil {
			return out, true, fmt.Errorf("flow table: sock_diag: %w", err)
		}
		b = rest
		if h.Seq != f.seq {
			continue // left over from an abandoned dump
		}
		switch h.Type {
		case unix.NLMSG_DONE:
			return out, true, nil
		case unix.NLMSG_ERROR:
			if len(msg) >= 4 {
				if errno := int32(ne.Uint32(msg)); errno < 0 {
					return out, true, fmt.Errorf("flow table: sock_diag: %w", unix.Errno(-errno))
				}
			}
			return out, true, nil
		case 20: // SOCK_DIAG_BY_FAMILY
			if s, ok := parseInetDiag(msg, proto); ok {
				out = append(out, s)
			}
		}
	}
	return out, false, nil
}

// parseInetDiag decodes one inet_diag_msg and its INET_DIAG_INFO.
func parseInetDiag(m []byte, proto uint8) (model.Socket, bool) {
	const msgLen = 72
	if len(m) < msgLen {
		return model.Socket{}, false
	}
	ne := binary.NativeEndian
	var s model.Socket
	s.Proto = proto
	family, state := m[0], m[1]
	sport, dport := binary.BigEndian.Uint16(m[4:]), binary.BigEndian.Uint16(m[6:])
	var src, dst netip.Addr
	switch family {
	case unix.AF_INET:
		src, dst = netip.AddrFrom4([4]byte(m[8:12])), netip.AddrFrom4([4]byte(m[24:28]))
	case unix.AF_INET6:
		// Dual-stack sockets talk IPv4 through mapped addresses: the
		// packets are IPv4.
		src, dst = netip.AddrFrom16([16]byte(m[8:24])).Unmap(), netip.AddrFrom16([16]byte(m[24:40])).Unmap()
		if src.Is6() && src.IsLinkLocalUnicast() || dst.Is6() && dst.IsLinkLocalUnicast() {
			if ifindex := ne.Uint32(m[40:]); ifindex != 0 {
				// Keep the interface for the route lookup.
				dst = dst.WithZone(fmt.Sprint(ifindex))
			}
		}
	default:
		return model.Socket{}, false
	}
	if dport == 0 || dst.IsUnspecified() {
		return model.Socket{}, false
	}
	s.Local, s.Remote = netip.AddrPortFrom(src, sport), netip.AddrPortFrom(dst, dport)
	s.ID = uint64(ne.Uint32(m[44:])) | uint64(ne.Uint32(m[48:]))<<32
	if proto == unix.IPPROTO_UDP {
		s.State = "connected"
	} else if int(state) < len(tcpStateNames) {
		s.State = tcpStateNames[state]
	}
	for a := m[msgLen:]; len(a) >= 4; {
		l, typ := int(ne.Uint16(a)), ne.Uint16(a[2:])
		if l < 4 || l > len(a) {
			break
		}
		if typ == 2 && proto == unix.IPPROTO_TCP { // INET_DIAG_INFO: struct tcp_info
			info := a[4:l]
			if len(info) >= 136 {
				s.HaveBytes = true
				s.TxBytes, s.RxBytes = ne.Uint64(info[120:]), ne.Uint64(info[128:])
				if len(info) >= 208 { // tcpi_bytes_sent (4.19): retransmissions too
					s.TxBytes = ne.Uint64(info[200:])
				}
			}
		}
		a = a[min((l+3)&^3, len(a)):]
	}
	return s, true
}

// pathFinder resolves sockets to paths with one link, address and
// neighbour dump per read and the cached route lookups.
type pathFinder struct {
	links  map[int]linkInfo
	local  map[netip.Addr]bool
	neighs map[neighKey][6]byte
	budget bool // false once the lookup budget is spent
}

type linkInfo struct {
	name, under string
	vlan        uint16
	mac         [6]byte
}

type neighKey struct {
	index int
	addr  netip.Addr
}

func (f *Flows) newPathFinder() (*pathFinder, error) {
	p := &pathFinder{links: map[int]linkInfo{}, local: map[netip.Addr]bool{}, neighs: map[neighKey][6]byte{}, budget: true}
	links, err := f.rt.LinkList()
	if err != nil {
		return nil, fmt.Errorf("flow table: links: %w", err)
	}
	names := make(map[int]string, len(links))
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	for _, l := range links {
		a := l.Attrs()
		li := linkInfo{name: a.Name, under: a.Name}
		copy(li.mac[:], a.HardwareAddr)
		if v, ok := l.(*netlink.Vlan); ok {
			// A VLAN interface hands its frames to the device below
			// (the bond) with the tag in the socket buffer.
			if parent, ok := names[v.ParentIndex]; ok {
				li.under, li.vlan = parent, uint16(v.VlanId)
			}
		}
		p.links[a.Index] = li
	}
	addrs, err := f.rt.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("flow table: addresses: %w", err)
	}
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			p.local[ip.Unmap()] = true
		}
	}
	const known = netlink.NUD_REACHABLE | netlink.NUD_STALE | netlink.NUD_DELAY | netlink.NUD_PROBE | netlink.NUD_PERMANENT | netlink.NUD_NOARP
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		neighs, err := f.rt.NeighList(0, fam)
		if err != nil {
			return nil, fmt.Errorf("flow table: neighbours: %w", err)
		}
		for _, n := range neighs {
			ip, ok := netip.AddrFromSlice(n.IP)
			if !ok || len(n.HardwareAddr) != 6 || n.State&known == 0 {
				continue
			}
			p.neighs[neighKey{n.LinkIndex, ip.Unmap()}] = [6]byte(n.HardwareAddr)
		}
	}
	return p, nil
}

// resolve fills s.Path; false when the route is not known yet (budget
// spent). Local and loopback destinations get an empty path: they cross
// no bond.
func (p *pathFinder) resolve(f *Flows, s *model.Socket, deadline time.Time) bool {
	dst := s.Remote.Addr()
	var oif uint32
	if z := dst.Zone(); z != "" {
		fmt.Sscan(z, &oif)
		dst = dst.WithZone("")
		s.Remote = netip.AddrPortFrom(dst, s.Remote.Port())
	}
	if dst.IsLoopback() || p.local[dst] {
		return true
	}
	key := routeKey{dst: dst, src: s.Local.Addr(), oif: oif}
	now := f.now()
	e, ok := f.routes[key]
	if !ok || now.Sub(e.at) >= routeTTL {
		if !p.budget || now.After(deadline) {
			p.budget = false
			return false
		}
		e = f.lookupRoute(key, now)
		f.routes[key] = e
	}
	if !e.ok {
		return true
	}
	li := p.links[e.index]
	s.Path = model.Path{Dev: li.name, Bond: li.under, VLAN: li.vlan, SrcMAC: li.mac, NextHop: e.nextHop}
	if mac, ok := p.neighs[neighKey{e.index, e.nextHop}]; ok {
		s.Path.DstMAC, s.Path.HaveDstMAC = mac, true
	}
	return true
}

// lookupRoute asks the kernel how it sends from key.src to key.dst, as
// `ip route get DST from SRC` does.
func (f *Flows) lookupRoute(key routeKey, now time.Time) routeEntry {
	e := routeEntry{at: now}
	opts := &netlink.RouteGetOptions{SrcAddr: net.IP(key.src.AsSlice()), OifIndex: int(key.oif)}
	routes, err := f.rt.RouteGetWithOptions(net.IP(key.dst.AsSlice()), opts)
	if err != nil || len(routes) == 0 {
		return e
	}
	r := routes[0]
	e.ok, e.index, e.nextHop = true, r.LinkIndex, key.dst
	if gw, ok := netip.AddrFromSlice(r.Gw); ok {
		e.nextHop = gw.Unmap()
	}
	return e
}
