//go:build linux

package guest

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/drill"
	"github.com/bondtop/bondtop/internal/udpstat"
)

// The failover drill's lab helpers: the peer (bondtop serve in the peer
// namespace, behind a bridge with a MAC table, or a bond), the drill run
// as a user runs it, and an independent receiver that times the drill's
// datagrams where they arrive.

// SetBondOption writes one bonding option through sysfs (the bond is in
// the root namespace), as an admin would.
func SetBondOption(t testing.TB, bond, option, value string) {
	t.Helper()
	if err := os.WriteFile("/sys/class/net/"+bond+"/bonding/"+option, []byte(value), 0); err != nil {
		t.Fatalf("%s %s %s: %v", bond, option, value, err)
	}
}

// PeerBridge makes the peer side a learning switch: a bridge over the far
// ends, ageing its MAC table after ageing, with the peer's address on it.
func PeerBridge(t testing.TB, p *Pair, ageing time.Duration) {
	t.Helper()
	centis := uint32(ageing / (10 * time.Millisecond))
	if err := p.Peer.NL.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}, AgeingTime: &centis}); err != nil {
		t.Fatalf("bridge br0 (ageing %v) in %s: %v", ageing, p.Peer.Name, err)
	}
	index := p.Peer.Link(t, "br0").Attrs().Index
	for _, port := range p.Far {
		if err := p.Peer.NL.LinkSetMasterByIndex(p.Peer.Link(t, port), index); err != nil {
			t.Fatalf("%s into br0: %v", port, err)
		}
	}
	p.Peer.Up(t, "br0")
	p.Peer.Addr(t, "br0", p.RemoteCIDR())
}

// Arrivals is an independent receiver: an AF_PACKET socket in the peer's
// namespace that notes when each UDP datagram from one address arrives on
// one interface, and each gratuitous ARP. It shares no code with bondtop.
type Arrivals struct {
	mu    sync.Mutex
	udp   []time.Time
	garps []time.Time
	// sent are this side's UDP datagrams to src, as they left.
	sent []time.Time
	// mac's frames, other than the measured datagrams, for the log.
	mac net.HardwareAddr
	// exceptPort: this side's datagrams to that port are not in sent.
	exceptPort uint16

	frames []frameNote
	fd     int
	stop   chan struct{}
	done   chan struct{}
}

// ListenArrivals starts the receiver on iface in ns for datagrams from
// src, and notes every other frame from mac.
func ListenArrivals(t testing.TB, ns *NS, iface string, src net.IP, mac net.HardwareAddr) *Arrivals {
	t.Helper()
	return ListenArrivalsExcept(t, ns, iface, src, mac, 0)
}

// ListenArrivalsExcept is ListenArrivals, leaving this side's datagrams
// to UDP port except (another sender's) out of its send times.
func ListenArrivalsExcept(t testing.TB, ns *NS, iface string, src net.IP, mac net.HardwareAddr, except uint16) *Arrivals {
	t.Helper()
	a := &Arrivals{stop: make(chan struct{}), done: make(chan struct{}), mac: mac, exceptPort: except}
	index := ns.Link(t, iface).Attrs().Index
	want := src.To4()
	proto := uint16(unix.ETH_P_ALL)
	proto = proto<<8 | proto>>8
	err := ns.Do(func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto))
		if err != nil {
			return err
		}
		a.fd = fd
		tv := unix.Timeval{Usec: 50000}
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		// The kernel's receive time, and room to queue: a busy VM may run
		// this reader late, and a dropped frame would be a false gap.
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20)
		// Only what this receiver counts reaches it: ARP, and IPv4 from
		// src (the far end's own datagrams to the host stay out).
		prog := arrivalsFilter(want)
		if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}); err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: index})
	})
	if err != nil {
		t.Fatalf("packet socket on %s in %s: %v", iface, ns.Name, err)
	}
	go func() {
		defer close(a.done)
		buf := make([]byte, 256)
		oob := make([]byte, 64)
		for {
			select {
			case <-a.stop:
				return
			default:
			}
			n, oobn, _, from, err := unix.Recvmsg(a.fd, buf, oob, 0)
			if err != nil || n < 42 {
				continue
			}
			now := kernelTime(oob[:oobn])
			f := buf[:n]
			if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
				// This side's own datagrams to src: when they left.
				if binary.BigEndian.Uint16(f[12:]) == 0x0800 && f[14+9] == 17 && bytes.Equal(f[14+16:14+20], want) &&
					(a.exceptPort == 0 || binary.BigEndian.Uint16(f[14+int(f[14]&0x0f)*4+2:]) != a.exceptPort) {
					a.mu.Lock()
					a.sent = append(a.sent, now)
					a.mu.Unlock()
				}
				continue
			}
			if bytes.Equal(f[6:12], a.mac) {
				a.mu.Lock()
				a.frames = append(a.frames, frameNote{now, describeFrame(f)})
				a.mu.Unlock()
			}
			switch binary.BigEndian.Uint16(f[12:]) {
			case 0x0800: // IPv4: UDP from src
				if f[14+9] == 17 && bytes.Equal(f[14+12:14+16], want) {
					a.mu.Lock()
					a.udp = append(a.udp, now)
					a.mu.Unlock()
				}
			case 0x0806: // ARP with sender address = target address
				if bytes.Equal(f[14+14:14+18], f[14+24:14+28]) && bytes.Equal(f[14+14:14+18], want) {
					a.mu.Lock()
					a.garps = append(a.garps, now)
					a.mu.Unlock()
				}
			}
		}
	}()
	t.Cleanup(a.Close)
	return a
}

// Close stops the receiver.
func (a *Arrivals) Close() {
	select {
	case <-a.stop:
		return
	default:
	}
	close(a.stop)
	<-a.done
	unix.Close(a.fd)
}

// LongestGap is the longest silence between datagrams that arrived in
// [from, to), and when it began.
func (a *Arrivals) LongestGap(from, to time.Time) (time.Duration, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return longestGap(a.udp, from, to)
}

// Pauses lists the n longest silences between datagrams that arrived in
// [from, to), longest first, for the log: where the wire's losses were.
func (a *Arrivals) Pauses(from, to time.Time, n int) []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []time.Duration
	eachGap(a.udp, from, to, func(gap time.Duration, _ time.Time) {
		out = append(out, gap.Round(100*time.Microsecond))
	})
	slices.SortFunc(out, func(a, b time.Duration) int { return cmp.Compare(b, a) })
	return out[:min(n, len(out))]
}

// SendStall is the longest pause in this side's own datagrams to src in
// [from, to): a sender the emulated CPUs ran late, which the receiver
// sees as a gap the bond did not cause.
func (a *Arrivals) SendStall(from, to time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	d, _ := longestGap(a.sent, from, to)
	return d
}

func longestGap(times []time.Time, from, to time.Time) (time.Duration, time.Time) {
	var longest time.Duration
	var at time.Time
	eachGap(times, from, to, func(gap time.Duration, start time.Time) {
		if gap > longest {
			longest, at = gap, start
		}
	})
	return longest, at
}

// eachGap calls f with each silence between two of times (in order) that
// fall in [from, to), and when it began.
func eachGap(times []time.Time, from, to time.Time, f func(gap time.Duration, start time.Time)) {
	var prev time.Time
	for _, t := range times {
		if t.Before(from) || !t.Before(to) {
			continue
		}
		if !prev.IsZero() {
			f(t.Sub(prev), prev)
		}
		prev = t
	}
}

// GARPs counts the gratuitous ARPs for src that arrived in [from, to).
func (a *Arrivals) GARPs(from, to time.Time) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, t := range a.garps {
		if !t.Before(from) && t.Before(to) {
			n++
		}
	}
	return n
}

// FindingWith returns the first finding containing every word, "" if none.
func FindingWith(res *drill.Result, words ...string) string {
	for _, f := range res.Findings {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(f, w)
		}
		if ok {
			return f
		}
	}
	return ""
}

type frameNote struct {
	at   time.Time
	what string
}

// Frames describes the frames from the watched MAC in [from, to), the
// measured datagrams left out.
func (a *Arrivals) Frames(from, to time.Time) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, f := range a.frames {
		if !f.at.Before(from) && f.at.Before(to) && f.what != "" {
			out = append(out, fmt.Sprintf("+%.1fms %s", float64(f.at.Sub(from).Microseconds())/1000, f.what))
		}
	}
	return out
}

// describeFrame names a frame's protocol; "" for UDP over IPv4 (the
// measured datagrams).
func describeFrame(f []byte) string {
	switch et := binary.BigEndian.Uint16(f[12:]); et {
	case 0x0800:
		switch f[14+9] {
		case 17:
			return ""
		case 6:
			return "IPv4 TCP"
		case 2:
			return "IPv4 IGMP"
		}
		return fmt.Sprintf("IPv4 proto %d", f[14+9])
	case 0x0806:
		return fmt.Sprintf("ARP op %d", binary.BigEndian.Uint16(f[14+6:]))
	case 0x86dd:
		if len(f) > 14+40 && f[14+6] == 58 {
			return fmt.Sprintf("ICMPv6 type %d", f[14+40])
		}
		if len(f) > 14+40 && f[14+6] == 0 {
			return "IPv6 hop-by-hop (MLD)"
		}
		return fmt.Sprintf("IPv6 next header %d", f[14+6])
	default:
		return fmt.Sprintf("ethertype %#04x", et)
	}
}

// kernelTime is the SO_TIMESTAMPNS of a received frame, now if none.
func kernelTime(oob []byte) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err == nil {
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) == 16 {
				return time.Unix(int64(binary.NativeEndian.Uint64(m.Data)), int64(binary.NativeEndian.Uint64(m.Data[8:])))
			}
		}
	}
	return time.Now()
}

// arrivalsFilter is a classic BPF program passing ARP frames and IPv4
// packets from or to src.
func arrivalsFilter(src net.IP) []unix.SockFilter {
	const (
		ldh = unix.BPF_LD | unix.BPF_H | unix.BPF_ABS
		ldw = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	return []unix.SockFilter{
		{Code: ldh, K: 12},                                  // 0: ethertype
		{Code: jeq, K: 0x0806, Jt: 5},                       // 1: ARP -> accept
		{Code: jeq, K: 0x0800, Jf: 5},                       // 2: not IPv4 -> drop
		{Code: ldw, K: 14 + 12},                             // 3: source address
		{Code: jeq, K: binary.BigEndian.Uint32(src), Jt: 2}, // 4: from src -> accept
		{Code: ldw, K: 14 + 16},                             // 5: destination
		{Code: jeq, K: binary.BigEndian.Uint32(src), Jf: 1}, // 6: not to src -> drop
		{Code: ret, K: 0xffff},                              // 7: accept
		{Code: ret, K: 0},                                   // 8: drop
	}
}

// Drops is how many frames the receiver's socket had to drop: a gap it
// measured is only the wire's when this is 0.
func (a *Arrivals) Drops() uint32 {
	st, err := unix.GetsockoptTpacketStats(a.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0
	}
	return st.Drops
}

// UDPReceiveErrors is the namespace's Udp InErrors (/proc/net/snmp as a
// thread inside it sees it): datagrams that reached a host of the
// namespace and were dropped before a socket took them, most often
// because the receiver's buffer was full while its process waited for
// the emulated CPUs.
func UDPReceiveErrors(t testing.TB, ns *NS) uint64 {
	t.Helper()
	var n uint64
	err := ns.Do(func() (err error) {
		n, err = udpstat.InErrors()
		return err
	})
	if err != nil {
		t.Fatalf("UDP counters in %s: %v", ns.Name, err)
	}
	return n
}

// HostDatagrams is an independent measure of what a host that only
// receives sees in a failover: a sender in the peer namespace sends rate
// sequence-numbered datagrams a second to the bond's address; a UDP socket
// on the host times each arrival (the kernel's receive time). The host's
// socket never sends, and its port stays open until the sender stopped
// (no ICMP port unreachable either): nothing of it can teach the switch.
// It shares no code with bondtop.
type HostDatagrams struct {
	mu sync.Mutex
	// sent[i] is when datagram i+1 left (zero: the send failed); got the
	// arrivals in the order they came.
	sent []time.Time
	got  []arrival
	tx   *net.UDPConn
	rx   *net.UDPConn
	stop chan struct{}
	wg   sync.WaitGroup
}

// StartHostDatagrams starts the sender in p.Peer and the receiver on the
// bond's address, port port, in p.Root; both stop at the end of the test.
func StartHostDatagrams(t testing.TB, p *Pair, port, rate int) *HostDatagrams {
	t.Helper()
	h := &HostDatagrams{stop: make(chan struct{})}
	err := p.Root.Do(func() (err error) {
		h.rx, err = net.ListenUDP("udp4", &net.UDPAddr{IP: p.Local, Port: port})
		if err != nil {
			return err
		}
		h.rx.SetReadBuffer(8 << 20)
		rc, err := h.rx.SyscallConn()
		if err != nil {
			return err
		}
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) }); err != nil {
			return err
		}
		return serr
	})
	if err != nil {
		t.Fatalf("host receiver on %s:%d: %v", p.Local, port, err)
	}
	err = p.Peer.Do(func() (err error) {
		h.tx, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: p.Local, Port: port})
		return err
	})
	if err != nil {
		h.rx.Close()
		t.Fatalf("peer sender to %s:%d: %v", p.Local, port, err)
	}
	h.wg.Add(2)
	go func() {
		defer h.wg.Done()
		buf := make([]byte, 64)
		oob := make([]byte, 64)
		for {
			n, oobn, _, _, err := h.rx.ReadMsgUDP(buf, oob)
			if err != nil {
				return
			}
			if n < 8 {
				continue
			}
			a := arrival{seq: binary.BigEndian.Uint64(buf), at: kernelTime(oob[:oobn])}
			h.mu.Lock()
			h.got = append(h.got, a)
			h.mu.Unlock()
		}
	}()
	go func() {
		defer h.wg.Done()
		every := time.Second / time.Duration(rate)
		start := time.Now()
		buf := make([]byte, 32)
		for seq := uint64(1); ; seq++ {
			// On schedule: a sender the emulated CPUs ran late catches
			// up at once, and its send times show the pause.
			if d := time.Until(start.Add(time.Duration(seq) * every)); d > 0 {
				select {
				case <-h.stop:
					return
				case <-time.After(d):
				}
			}
			binary.BigEndian.PutUint64(buf, seq)
			_, err := h.tx.Write(buf)
			at := time.Now()
			if err != nil {
				at = time.Time{} // ENOBUFS and the like: not sent
			}
			h.mu.Lock()
			h.sent = append(h.sent, at)
			h.mu.Unlock()
			select {
			case <-h.stop:
				return
			default:
			}
		}
	}()
	t.Cleanup(h.Close)
	return h
}

// Close stops the sender, lets the last datagrams arrive, then closes the
// receiver.
func (h *HostDatagrams) Close() {
	select {
	case <-h.stop:
		return
	default:
	}
	close(h.stop)
	time.Sleep(200 * time.Millisecond)
	h.tx.Close()
	h.rx.Close()
	h.wg.Wait()
}

type arrival struct {
	seq uint64
	at  time.Time
}

// LongestGap is the longest silence between arrivals in [from, to), and
// when it began: what the host saw, pauses of the sender included.
func (h *HostDatagrams) LongestGap(from, to time.Time) (time.Duration, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	times := make([]time.Time, len(h.got))
	for i, a := range h.got {
		times[i] = a.at
	}
	return longestGap(times, from, to)
}

// Outage is the longest run of datagrams that never arrived, among the
// arrivals in [from, to), reckoned on the sender's clock: from when the
// last datagram before the run left to when the first after it did. A
// pause of the sender alone loses nothing and is no outage; one inside
// an outage counts with it.
func (h *HostDatagrams) Outage(from, to time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	var longest time.Duration
	var prev uint64
	for _, a := range h.got {
		if a.at.Before(from) || !a.at.Before(to) || a.seq <= prev {
			continue
		}
		if prev > 0 && a.seq > prev+1 && a.seq <= uint64(len(h.sent)) {
			if d := h.sent[a.seq-1].Sub(h.sent[prev-1]); d > longest {
				longest = d
			}
		}
		prev = a.seq
	}
	return longest
}

// SendStall is the sender's own longest pause in [from, to): the emulated
// CPUs running it late, a gap the bond did not cause.
func (h *HostDatagrams) SendStall(from, to time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, _ := longestGap(h.sent, from, to)
	return d
}

// MACFrames notes every frame with one source MAC that arrives on an
// interface: on the switch's ports, all a switch can learn that MAC's
// port from.
type MACFrames struct {
	mu     sync.Mutex
	frames []frameNote
	fd     int
	stop   chan struct{}
	done   chan struct{}
}

// ListenMAC starts noting the frames from mac arriving on iface in ns.
func ListenMAC(t testing.TB, ns *NS, iface string, mac net.HardwareAddr) *MACFrames {
	t.Helper()
	m := &MACFrames{stop: make(chan struct{}), done: make(chan struct{})}
	index := ns.Link(t, iface).Attrs().Index
	proto := uint16(unix.ETH_P_ALL)
	proto = proto<<8 | proto>>8
	err := ns.Do(func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto))
		if err != nil {
			return err
		}
		m.fd = fd
		tv := unix.Timeval{Usec: 50000}
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		const (
			ldw = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
			ldh = unix.BPF_LD | unix.BPF_H | unix.BPF_ABS
			jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
			ret = unix.BPF_RET | unix.BPF_K
		)
		prog := []unix.SockFilter{
			{Code: ldw, K: 6}, // source MAC, first 4 bytes
			{Code: jeq, K: binary.BigEndian.Uint32(mac[0:4]), Jf: 3},
			{Code: ldh, K: 10}, // its last 2
			{Code: jeq, K: uint32(binary.BigEndian.Uint16(mac[4:6])), Jf: 1},
			{Code: ret, K: 0xffff},
			{Code: ret, K: 0},
		}
		if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}); err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: index})
	})
	if err != nil {
		t.Fatalf("packet socket on %s in %s: %v", iface, ns.Name, err)
	}
	go func() {
		defer close(m.done)
		buf := make([]byte, 256)
		oob := make([]byte, 64)
		for {
			select {
			case <-m.stop:
				return
			default:
			}
			n, oobn, _, from, err := unix.Recvmsg(m.fd, buf, oob, 0)
			if err != nil || n < 14 {
				continue
			}
			if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
				continue
			}
			what := describeFrame(buf[:n])
			if what == "" {
				what = "IPv4 UDP"
			}
			m.mu.Lock()
			m.frames = append(m.frames, frameNote{kernelTime(oob[:oobn]), what})
			m.mu.Unlock()
		}
	}()
	t.Cleanup(m.Close)
	return m
}

// Close stops the capture.
func (m *MACFrames) Close() {
	select {
	case <-m.stop:
		return
	default:
	}
	close(m.stop)
	<-m.done
	unix.Close(m.fd)
}

// Between describes the frames that arrived in [from, to), with their
// time after from.
func (m *MACFrames) Between(from, to time.Time) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, f := range m.frames {
		if !f.at.Before(from) && f.at.Before(to) {
			out = append(out, fmt.Sprintf("+%.1fms %s", float64(f.at.Sub(from).Microseconds())/1000, f.what))
		}
	}
	return out
}

// WaitQuiet waits until no frame arrived for quiet (a bond just made
// still sends its IPv6 start-up: DAD, MLD reports, router solicitations),
// at most limit.
func (m *MACFrames) WaitQuiet(t testing.TB, quiet, limit time.Duration) {
	t.Helper()
	start := time.Now()
	Eventually(t, limit, fmt.Sprintf("no frame from the bond for %v", quiet), func() (bool, string) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.frames) == 0 || m.frames[len(m.frames)-1].at.Before(start) {
			return time.Since(start) >= quiet, "nothing"
		}
		last := m.frames[len(m.frames)-1]
		return time.Since(last.at) >= quiet, last.what
	})
}

// FDBWatch samples where the bridge's forwarding table puts one MAC
// (which port, or none: the bridge floods), for the log: what the switch
// believed during a drill.
type FDBWatch struct {
	mu    sync.Mutex
	notes []frameNote
	stop  chan struct{}
	done  chan struct{}
}

// WatchFDB samples the peer bridge's entry for mac every 50 ms.
func WatchFDB(t testing.TB, ns *NS, mac net.HardwareAddr) *FDBWatch {
	t.Helper()
	w := &FDBWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		last := "?"
		for {
			port := "none"
			if neighs, err := ns.NL.NeighList(0, unix.AF_BRIDGE); err == nil {
				for _, n := range neighs {
					if bytes.Equal(n.HardwareAddr, mac) && n.Flags&netlink.NTF_SELF == 0 {
						if l, err := ns.NL.LinkByIndex(n.LinkIndex); err == nil {
							port = l.Attrs().Name
						}
					}
				}
			} else {
				port = "error: " + err.Error()
			}
			if port != last {
				last = port
				w.mu.Lock()
				w.notes = append(w.notes, frameNote{time.Now(), port})
				w.mu.Unlock()
			}
			select {
			case <-w.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		close(w.stop)
		<-w.done
	})
	return w
}

// Where lists where the bridge had the MAC in [from, to): the entry at
// from, then each change.
func (w *FDBWatch) Where(from, to time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for i, n := range w.notes {
		if n.at.Before(to) && (!n.at.Before(from) || i == len(w.notes)-1 || !w.notes[i+1].at.Before(from)) {
			out = append(out, n.what)
		}
	}
	return out
}

// Changes lists where the bridge had the MAC from from on, with the time
// after from each change was seen.
func (w *FDBWatch) Changes(from time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, n := range w.notes {
		out = append(out, fmt.Sprintf("%+.0fms %s", float64(n.at.Sub(from).Microseconds())/1000, n.what))
	}
	return out
}

// RxCounters samples interfaces' rx_packets every 50 ms, for the log: by
// which slave the host's traffic came in.
type RxCounters struct {
	mu      sync.Mutex
	samples []rxSample
	stop    chan struct{}
	done    chan struct{}
}

type rxSample struct {
	at time.Time
	rx []uint64
}

// WatchRx starts sampling ifaces (in the root namespace's sysfs).
func WatchRx(t testing.TB, ifaces ...string) *RxCounters {
	t.Helper()
	w := &RxCounters{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			s := rxSample{at: time.Now()}
			for _, i := range ifaces {
				b, _ := os.ReadFile("/sys/class/net/" + i + "/statistics/rx_packets")
				var v uint64
				fmt.Sscan(strings.TrimSpace(string(b)), &v)
				s.rx = append(s.rx, v)
			}
			w.mu.Lock()
			w.samples = append(w.samples, s)
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		close(w.stop)
		<-w.done
	})
	return w
}

// Delta is each interface's packets received between the first sample
// at or after from and the last before to.
func (w *RxCounters) Delta(from, to time.Time) []uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var a, b *rxSample
	for i := range w.samples {
		s := &w.samples[i]
		if a == nil && !s.at.Before(from) {
			a = s
		}
		if s.at.Before(to) {
			b = s
		}
	}
	if a == nil || b == nil {
		return nil
	}
	out := make([]uint64, len(a.rx))
	for i := range a.rx {
		out[i] = b.rx[i] - a.rx[i]
	}
	return out
}

// Arrivals counts the datagrams that arrived in [from, to).
func (h *HostDatagrams) Arrivals(from, to time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, a := range h.got {
		if !a.at.Before(from) && a.at.Before(to) {
			n++
		}
	}
	return n
}
