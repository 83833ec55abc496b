package drill

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/bonding"
)

// The drill's hands on the kernel, all netlink: a slave's admin state,
// the bond's active slave, the bond's settings, and its notifications.

func linkByName(name string) (netlink.Link, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}

func adminUp(name string) (bool, error) {
	l, err := linkByName(name)
	if err != nil {
		return false, err
	}
	return l.Attrs().Flags&unix.IFF_UP != 0 || l.Attrs().RawFlags&unix.IFF_UP != 0, nil
}

func setAdminUp(name string, up bool) error {
	l, err := linkByName(name)
	if err != nil {
		return err
	}
	if up {
		err = netlink.LinkSetUp(l)
	} else {
		err = netlink.LinkSetDown(l)
	}
	if err != nil {
		return fmt.Errorf("setting %s %s: %w", name, map[bool]string{true: "up", false: "down"}[up], err)
	}
	return nil
}

// setActiveSlave changes the bond's active_slave through sysfs, as
// `echo SLAVE > /sys/class/net/BOND/bonding/active_slave` does. Not by
// RTM_NEWLINK (`ip link set BOND type bond active_slave SLAVE`): a
// change by netlink ends in a NETDEV_CHANGE notification of the bond, on
// which IPv6 resends the bond's MLD reports ("we might have roamed"), and
// those teach a switch the new port before the bond's own notifications
// would; a drill that measured that would show a soft failover without
// GARP as cheap (docs/drill.md). setActiveSlave reports how it moved it:
// false when sysfs failed and netlink did it.
func setActiveSlave(bond, slave string) (quiet bool, err error) {
	path, perr := bondOptionPath(bond, "active_slave")
	if perr == nil {
		if err := os.WriteFile(path, []byte(slave), 0); err == nil {
			return true, nil
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
			// The bonding driver refused the slave: netlink would too.
			return true, fmt.Errorf("making %s the active slave of %s: %w", slave, bond, err)
		}
	}
	return false, setActiveSlaveNetlink(bond, slave)
}

// bondOptionPath is the sysfs file of one bonding option of bond.
func bondOptionPath(bond, option string) (string, error) {
	if bond == "" || bond == "." || bond == ".." || strings.ContainsAny(bond, "/\x00") {
		return "", fmt.Errorf("%q is not an interface name", bond)
	}
	return filepath.Join("/sys/class/net", bond, "bonding", option), nil
}

// setActiveSlaveNetlink changes the bond's active_slave by RTM_NEWLINK
// (the bond's IFLA_BOND_ACTIVE_SLAVE): where sysfs is not writable.
func setActiveSlaveNetlink(bond, slave string) error {
	b, err := linkByName(bond)
	if err != nil {
		return err
	}
	s, err := linkByName(slave)
	if err != nil {
		return err
	}
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(b.Attrs().Index)
	req.AddData(msg)
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("bond"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	data.AddRtAttr(nl.IFLA_BOND_ACTIVE_SLAVE, nl.Uint32Attr(uint32(s.Attrs().Index)))
	req.AddData(info)
	if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
		return fmt.Errorf("making %s the active slave of %s: %w", slave, bond, err)
	}
	return nil
}

// activeSlave is the bond's active slave now, "" when none.
func activeSlave(bond string) (string, error) {
	l, err := linkByName(bond)
	if err != nil {
		return "", err
	}
	b, ok := l.(*netlink.Bond)
	if !ok {
		return "", fmt.Errorf("%s is not a bond", bond)
	}
	return nameOf(b.ActiveSlave), nil
}

// slaveMIIUp reports whether the bond sees slave's link up.
func slaveMIIUp(slave string) bool {
	l, err := netlink.LinkByName(slave)
	if err != nil {
		return false
	}
	bs, ok := l.Attrs().Slave.(*netlink.BondSlave)
	return ok && bs.MiiStatus == netlink.BondLinkUp
}

func nameOf(index int) string {
	if index <= 0 {
		return ""
	}
	l, err := netlink.LinkByIndex(index)
	if err != nil {
		return ""
	}
	return l.Attrs().Name
}

// quickBond reads the bond and its slaves with one RTM_GETLINK each: what
// UsableSlaves needs (mode, active slave and aggregator, each slave's
// link, state and aggregator), without the full dump, /proc and ethtool
// reads of the collector's live source, whose locks would slow the very
// failover being measured.
func quickBond(name string, slaves []string) (*bonding.Bond, error) {
	l, err := linkByName(name)
	if err != nil {
		return nil, err
	}
	bl, ok := l.(*netlink.Bond)
	if !ok {
		return nil, fmt.Errorf("%s is not a bond", name)
	}
	b := bonding.FromNetlinkBond(bl, nil, nameOf)
	for _, s := range slaves {
		sl, err := linkByName(s)
		if err != nil {
			return nil, err
		}
		if sl.Attrs().MasterIndex != bl.Index {
			continue // released meanwhile
		}
		b.Slaves = append(b.Slaves, bonding.FromNetlinkSlave(sl, nil))
	}
	return &b, nil
}

// readSettings reads the options that decide a failover's cost.
func readSettings(bond string) (Settings, error) {
	l, err := linkByName(bond)
	if err != nil {
		return Settings{}, err
	}
	b, ok := l.(*netlink.Bond)
	if !ok {
		return Settings{}, fmt.Errorf("%s is not a bond", bond)
	}
	s := Settings{MIIMonMs: b.Miimon, UpDelayMs: b.UpDelay, DownDelayMs: b.DownDelay, NumPeerNotif: b.NumPeerNotif,
		ResendIGMP: b.ResendIgmp, ARPIntervalMs: b.ArpInterval, PeerNotifMs: -1, Primary: nameOf(b.Primary)}
	if b.PrimaryReselect >= 0 {
		s.PrimaryReselect = b.PrimaryReselect.String()
	}
	return s, nil
}

// bondEvent is a change in the bond's own view, as netlink announced it.
type bondEvent struct {
	at     time.Time
	active string // the new active slave, for an active change
	slave  string // the slave whose bonding state or MII status changed
	what   string
}

// eventWatch records the bond's notifications: its active slave, and each
// slave's bonding state and MII status (not the admin flag the drill
// itself flips).
type eventWatch struct {
	mu     sync.Mutex
	events []bondEvent
	done   chan struct{}
	// changed has a value after any notification about the bond or its
	// slaves.
	changed chan struct{}
}

func watchBond(bond string) (*eventWatch, error) {
	b, err := linkByName(bond)
	if err != nil {
		return nil, err
	}
	bondIndex := b.Attrs().Index
	lastActive := b.(*netlink.Bond).ActiveSlave
	type slaveView struct {
		state netlink.BondSlaveState
		mii   netlink.BondSlaveMiiStatus
	}
	last := map[int]slaveView{}
	links, err := netlink.LinkList()
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		if bs, ok := l.Attrs().Slave.(*netlink.BondSlave); ok && l.Attrs().MasterIndex == bondIndex {
			last[l.Attrs().Index] = slaveView{bs.State, bs.MiiStatus}
		}
	}
	updates := make(chan netlink.LinkUpdate, 1024)
	w := &eventWatch{done: make(chan struct{}), changed: make(chan struct{}, 1)}
	if err := netlink.LinkSubscribe(updates, w.done); err != nil {
		return nil, fmt.Errorf("link notifications: %w", err)
	}
	go func() {
		for u := range updates {
			now := time.Now()
			a := u.Link.Attrs()
			var ev *bondEvent
			if bl, ok := u.Link.(*netlink.Bond); ok && a.Index == bondIndex && u.Header.Type == unix.RTM_NEWLINK {
				if bl.ActiveSlave != lastActive {
					lastActive = bl.ActiveSlave
					ev = &bondEvent{at: now, active: nameOf(bl.ActiveSlave), what: "active slave " + orNone(nameOf(bl.ActiveSlave))}
				}
			} else if bs, ok := a.Slave.(*netlink.BondSlave); ok && a.MasterIndex == bondIndex {
				v := slaveView{bs.State, bs.MiiStatus}
				if old, seen := last[a.Index]; !seen || old != v {
					last[a.Index] = v
					if seen {
						ev = &bondEvent{at: now, slave: a.Name, what: fmt.Sprintf("%s %s, mii %s", a.Name, bs.State, bs.MiiStatus)}
					}
				}
			}
			if a.Index == bondIndex || a.MasterIndex == bondIndex {
				select {
				case w.changed <- struct{}{}:
				default:
				}
			}
			if ev != nil {
				w.mu.Lock()
				w.events = append(w.events, *ev)
				w.mu.Unlock()
			}
		}
	}()
	return w, nil
}

func (w *eventWatch) close() { close(w.done) }

// between returns the events in [from, to).
func (w *eventWatch) between(from, to time.Time) []bondEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []bondEvent
	for _, e := range w.events {
		if !e.at.Before(from) && e.at.Before(to) {
			out = append(out, e)
		}
	}
	return out
}

// notification is a frame seen leaving a slave: one of the bond's peer
// notifications (a gratuitous ARP, an unsolicited NA, an IGMP/MLD
// report), or, for a capture of everything, any other frame (kind
// notNotification, what names it).
type notification struct {
	at    time.Time
	slave string
	kind  notificationKind
	what  string
}

// capture listens on every slave for the frames that leave it: the peer
// notifications the bond sends, and with all every other frame too (a
// quiet drill accounts for whatever this host sent meanwhile). AF_PACKET
// sockets that see the slave's outgoing frames.
type capture struct {
	mu    sync.Mutex
	seen  []notification
	fds   []int
	stop  chan struct{}
	group sync.WaitGroup
}

func startCapture(slaves []string, all bool) (*capture, error) {
	c := &capture{stop: make(chan struct{})}
	for _, name := range slaves {
		l, err := linkByName(name)
		if err != nil {
			c.close()
			return nil, err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			c.close()
			return nil, fmt.Errorf("packet socket on %s: %w", name, err)
		}
		c.fds = append(c.fds, fd)
		// Only ARP, IGMP and ICMPv6 reach this socket: the measuring
		// stream's thousands of datagrams a second stay in the kernel.
		// A quiet drill's host sends no stream: every frame leaving
		// reaches it.
		prog := notificationFilter()
		if all {
			prog = outgoingFilter()
		}
		if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}); err != nil {
			c.close()
			return nil, fmt.Errorf("packet filter on %s: %w", name, err)
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: l.Attrs().Index}); err != nil {
			c.close()
			return nil, fmt.Errorf("packet socket on %s: %w", name, err)
		}
		tv := unix.Timeval{Usec: 100000}
		_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		c.group.Add(1)
		go c.read(fd, name)
	}
	return c, nil
}

func (c *capture) read(fd int, slave string) {
	defer c.group.Done()
	buf := make([]byte, 128)
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		n, from, err := unix.Recvfrom(fd, buf, unix.MSG_TRUNC)
		if err != nil {
			continue // the timeout, to look at stop
		}
		ll, ok := from.(*unix.SockaddrLinklayer)
		if !ok || ll.Pkttype != unix.PACKET_OUTGOING {
			continue
		}
		f := buf[:min(n, len(buf))]
		nt := notification{at: time.Now(), slave: slave, kind: peerNotification(f)}
		if nt.kind == notNotification {
			nt.what = describeFrame(f)
		}
		c.mu.Lock()
		c.seen = append(c.seen, nt)
		c.mu.Unlock()
	}
}

func (c *capture) between(from, to time.Time) []notification {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []notification
	for _, n := range c.seen {
		if !n.at.Before(from) && n.at.Before(to) {
			out = append(out, n)
		}
	}
	return out
}

func (c *capture) close() {
	close(c.stop)
	c.group.Wait()
	for _, fd := range c.fds {
		unix.Close(fd)
	}
}

func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

// notificationFilter is a classic BPF program that accepts ARP frames,
// IGMP, and IPv6 carrying ICMPv6 or a hop-by-hop header (MLD reports
// come behind one), and drops the rest; peerNotification decides.
func notificationFilter() []unix.SockFilter {
	const (
		ldh = unix.BPF_LD | unix.BPF_H | unix.BPF_ABS
		ldb = unix.BPF_LD | unix.BPF_B | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	return []unix.SockFilter{
		{Code: ldh, K: 12},              // 0: ethertype
		{Code: jeq, K: 0x0806, Jt: 7},   // 1: ARP -> accept
		{Code: jeq, K: 0x0800, Jf: 2},   // 2: not IPv4 -> 5
		{Code: ldb, K: 14 + 9},          // 3: IPv4 protocol
		{Code: jeq, K: 2, Jt: 4, Jf: 5}, // 4: IGMP -> accept, else drop
		{Code: jeq, K: 0x86dd, Jf: 4},   // 5: not IPv6 -> drop
		{Code: ldb, K: 14 + 6},          // 6: next header
		{Code: jeq, K: 58, Jt: 1},       // 7: ICMPv6 -> accept
		{Code: jeq, K: 0, Jf: 1},        // 8: not hop-by-hop -> drop
		{Code: ret, K: 0xffff},          // 9: accept
		{Code: ret, K: 0},               // 10: drop
	}
}

// Linux's classic BPF ancillary load of the packet type (linux/filter.h:
// SKF_AD_OFF + SKF_AD_PKTTYPE).
const skfAdPkttype = 0xfffff000 + 4

// outgoingFilter accepts every frame the host sends and nothing else.
func outgoingFilter() []unix.SockFilter {
	return []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_B | unix.BPF_ABS, K: skfAdPkttype},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.PACKET_OUTGOING, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0xffff},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0},
	}
}
