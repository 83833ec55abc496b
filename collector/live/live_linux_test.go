package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/internal/nltest"

	"github.com/mdlayher/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/bonding"
)

// The host that runs these tests has no bonding driver (real bonds are
// the lab's job), but veth and network namespaces work when run as root.
// Each test that touches the kernel runs on a locked thread in a fresh
// network namespace, so it sees only the links it made.

// inNewNetns moves the calling goroutine's thread into a fresh network
// namespace until the test ends. It skips the test where that is not
// allowed (not root, no namespaces).
func inNewNetns(t testing.TB) {
	t.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Skipf("network namespaces: %v", err)
	}
	ns, err := netns.New()
	if err != nil {
		orig.Close()
		runtime.UnlockOSThread()
		t.Skipf("new network namespace (needs root): %v", err)
	}
	t.Cleanup(func() {
		ns.Close()
		if err := netns.Set(orig); err != nil {
			// Leave the thread locked: the runtime discards it when the
			// goroutine ends, rather than reuse a thread in our namespace.
			t.Errorf("restore network namespace: %v", err)
			return
		}
		orig.Close()
		runtime.UnlockOSThread()
	})
	// Quiet links: no IPv6 router solicitations or DAD on the veths, so
	// counters move only with the frames a test sends.
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/default/disable_ipv6", []byte("1"), 0)
}

// addVeth creates a veth pair with the given MTU and brings both ends up.
func addVeth(t testing.TB, name, peer string, mtu int) (netlink.Link, netlink.Link) {
	t.Helper()
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name, MTU: mtu}, PeerName: peer}
	if err := netlink.LinkAdd(v); err != nil {
		t.Fatalf("add veth %s: %v", name, err)
	}
	a, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := netlink.LinkByName(peer)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []netlink.Link{a, b} {
		if err := netlink.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// waitOperState polls until the link reaches want (linkwatch applies
// carrier changes asynchronously).
func waitOperState(t testing.TB, name string, want netlink.LinkOperState) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		l, err := netlink.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if l.Attrs().OperState == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: operstate %v, want %v", name, l.Attrs().OperState, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sendFrames transmits n broadcast frames of 60 bytes on ifindex through a
// packet socket.
func sendFrames(t testing.TB, ifindex, n int) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err != nil {
		t.Fatalf("packet socket: %v", err)
	}
	defer unix.Close(fd)
	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5})
	sa := &unix.SockaddrLinklayer{Ifindex: ifindex, Halen: 6}
	copy(sa.Addr[:], frame[:6])
	for range n {
		if err := unix.Sendto(fd, frame, 0, sa); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
}

func newTestLive(t testing.TB) *Source {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestLiveNoBondingDriver(t *testing.T) {
	if _, err := os.Stat("/proc/net/bonding"); err == nil {
		t.Skip("this host has the bonding driver")
	}
	if _, err := os.Stat("/sys/class/net/bonding_masters"); err == nil {
		t.Skip("this host has the bonding driver")
	}
	inNewNetns(t)
	addVeth(t, "veth0", "veth1", 1500)
	s := newTestLive(t)
	r, err := s.Read()
	if !errors.Is(err, collector.ErrNoBonding) {
		t.Fatalf("Read = %+v, %v; want ErrNoBonding", r, err)
	}
}

func TestLiveNoBondsWithDriver(t *testing.T) {
	inNewNetns(t)
	s := newTestLive(t)
	// The driver's files, without a bond.
	s.fsys = fstest.MapFS{"sys/class/net/bonding_masters": {Data: []byte("\n")}}
	r, err := s.Read()
	if err != nil || len(r.Bonds) != 0 {
		t.Fatalf("Read = %+v, %v; want an empty reading", r, err)
	}
}

// TestLiveVethDump converts a real kernel dump: veth links carry the same
// generic attributes (counters, MTU, operstate) as bond slaves.
func TestLiveVethDump(t *testing.T) {
	inNewNetns(t)
	v0, _ := addVeth(t, "veth0", "veth1", 1400)
	waitOperState(t, "veth0", netlink.OperUp)
	const frames = 37
	sendFrames(t, v0.Attrs().Index, frames)

	s := newTestLive(t)
	dump := func() map[string]bonding.Slave {
		var r collector.Reading
		if err := s.dumpLinks(&r, func(bonding.LinkScan) bool { return true }); err != nil {
			t.Fatal(err)
		}
		out := make(map[string]bonding.Slave)
		for _, msg := range s.msgs {
			scan, ok := bonding.ScanLink(msg)
			if !ok || scan.Bond || scan.Slave {
				t.Errorf("scan %+v, %v", scan, ok)
			}
			link, err := deserializeLink(msg)
			if err != nil {
				t.Fatal(err)
			}
			if link.Attrs().Index != scan.Index {
				t.Errorf("%s: scan index %d, link %d", link.Attrs().Name, scan.Index, link.Attrs().Index)
			}
			out[link.Attrs().Name] = bonding.FromNetlinkSlave(link, nil)
		}
		return out
	}
	before := readNetDev(t)
	links := dump()
	after := readNetDev(t)

	v, ok := links["veth0"]
	if !ok {
		t.Fatalf("veth0 not in the dump: %v", links)
	}
	if *v.MTU != 1400 || *v.OperState != "up" || v.State != nil || v.MIIStatus != nil {
		t.Errorf("veth0: mtu %d operstate %s state %v", *v.MTU, *v.OperState, v.State)
	}
	// A fresh namespace's loopback is down.
	if lo := links["lo"]; lo.OperState == nil || *lo.OperState != "down" {
		t.Errorf("lo operstate %v", lo.OperState)
	}
	for _, tc := range []struct {
		ifname  string
		counter bonding.Counter
		atLeast uint64
	}{
		{"veth0", bonding.TxPackets, frames}, {"veth0", bonding.TxBytes, frames * 60},
		{"veth1", bonding.RxPackets, frames}, {"veth1", bonding.RxBytes, frames * 60},
	} {
		link, was, now := links[tc.ifname], before[tc.ifname], after[tc.ifname]
		got, ok := link.Counters.Get(tc.counter)
		if !ok || got < tc.atLeast {
			t.Errorf("%s %v = %d, want >= %d", tc.ifname, tc.counter, got, tc.atLeast)
		}
		// /proc/net/dev, read around the dump, brackets the value.
		lo, _ := was.Get(tc.counter)
		hi, _ := now.Get(tc.counter)
		if got < lo || got > hi {
			t.Errorf("%s %v = %d, /proc/net/dev said %d..%d", tc.ifname, tc.counter, got, lo, hi)
		}
	}
	for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
		if !v.Counters.Has(c) {
			t.Errorf("veth0 lacks %v", c)
		}
	}

	// ethtool through the source's client: veth reports 10000 Mb/s full.
	if s.eth == nil {
		t.Log("no ethtool netlink family on this kernel")
	} else {
		lm, err := s.eth.LinkMode(ethtoolIface(v0))
		if err != nil {
			t.Fatalf("ethtool veth0: %v", err)
		}
		speed, duplex := bonding.FromEthtoolLinkMode(lm)
		if speed == nil || *speed != 10000 || duplex == nil || *duplex != "full" {
			t.Errorf("ethtool veth0: %v %v", speed, duplex)
		}
	}

	// The peer down: veth0 loses carrier, "lowerlayerdown" as sysfs says.
	if err := netlink.LinkSetDown(mustLink(t, "veth1")); err != nil {
		t.Fatal(err)
	}
	waitOperState(t, "veth0", netlink.OperLowerLayerDown)
	if st := dump()["veth0"].OperState; st == nil || *st != "lowerlayerdown" {
		t.Errorf("veth0 operstate %v, want lowerlayerdown", st)
	}
}

func mustLink(t testing.TB, name string) netlink.Link {
	t.Helper()
	l, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// readNetDev parses the calling thread's /proc/net/dev (the namespace of
// the thread, not of the process).
func readNetDev(t testing.TB) map[string]bonding.Counters {
	t.Helper()
	data, err := os.ReadFile("/proc/thread-self/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	m, warnings := bonding.ParseNetDev(data)
	if len(warnings) > 0 {
		t.Fatal(warnings)
	}
	return m
}

// TestLiveChanges: a watched link going down reaches Changes within
// 100 ms; links unrelated to any bond do not wake the sampler.
func TestLiveChanges(t *testing.T) {
	inNewNetns(t)
	v0, _ := addVeth(t, "veth0", "veth1", 1500)
	v2, _ := addVeth(t, "veth2", "veth3", 1500)
	s := newTestLive(t)
	// Pretend veth0 is a bond's slave, as a Read would record it.
	s.setWatched([]int{v0.Attrs().Index})
	settle := func() {
		time.Sleep(50 * time.Millisecond)
		select {
		case <-s.Changes():
		default:
		}
	}
	settle()

	gen := s.gen.Load()
	start := time.Now()
	if err := netlink.LinkSetDown(v0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Changes():
		t.Logf("link down seen after %v", time.Since(start))
	case <-time.After(100 * time.Millisecond):
		t.Fatal("no change within 100 ms of the link going down")
	}
	if s.gen.Load() == gen {
		t.Error("the notification did not mark the cache stale")
	}

	settle()
	if err := netlink.LinkSetDown(v2); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Changes():
		t.Error("an unrelated veth woke the sampler")
	case <-time.After(200 * time.Millisecond):
	}
}

func TestLiveRelevant(t *testing.T) {
	s := &Source{}
	s.setWatched([]int{10, 11})
	veth := func(index, master int, slave netlink.LinkSlave) netlink.LinkUpdate {
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Index: index, MasterIndex: master, Slave: slave}}
		return netlink.LinkUpdate{Link: v}
	}
	tests := []struct {
		name string
		u    netlink.LinkUpdate
		want bool
	}{
		{"a bond appears", netlink.LinkUpdate{Link: &netlink.Bond{LinkAttrs: netlink.LinkAttrs{Index: 50}}}, true},
		{"a new slave", veth(51, 50, &netlink.BondSlave{}), true},
		{"a watched slave is released", veth(11, 0, nil), true},
		{"a link joins a watched master", veth(52, 10, nil), true},
		{"an unrelated veth", veth(53, 0, nil), false},
		{"a bridge port", veth(54, 60, nil), false},
	}
	for _, tt := range tests {
		if got := s.relevant(tt.u); got != tt.want {
			t.Errorf("%s: relevant = %v", tt.name, got)
		}
	}
}

// TestLiveCloseNoLeak: Close ends every goroutine the source (and the
// netlink library under it) started, and Read after Close fails.
func TestLiveCloseNoLeak(t *testing.T) {
	inNewNetns(t)
	addVeth(t, "veth0", "veth1", 1500)
	base := runtime.NumGoroutine()
	for range 5 {
		s, err := New()
		if err != nil {
			t.Fatal(err)
		}
		s.Read()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if _, err := s.Read(); err == nil {
			t.Fatal("Read after Close succeeded")
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), base, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLiveResubscribe: when the kernel ends the subscription (here: its
// socket is shut), the source says so on Changes and subscribes again.
func TestLiveResubscribe(t *testing.T) {
	inNewNetns(t)
	v0, _ := addVeth(t, "veth0", "veth1", 1500)
	ch := make(chan netlink.LinkUpdate)
	subDone := make(chan struct{})
	s := &Source{ns: netns.None(), changes: make(chan struct{}, 1), done: make(chan struct{})}
	if ns, err := netns.Get(); err == nil {
		s.ns = ns
		defer ns.Close()
	}
	s.setWatched([]int{v0.Attrs().Index})
	s.wg.Add(1)
	go s.watch(ch, subDone)
	close(ch) // the library closes its channel when Receive fails
	select {
	case <-s.Changes():
	case <-time.After(time.Second):
		t.Fatal("a lost subscription was not reported")
	}
	select {
	case <-subDone:
	default:
		t.Error("the dead subscription's done channel is still open")
	}
	// The new subscription lives in this namespace although the watch
	// goroutine's thread does not.
	time.Sleep(300 * time.Millisecond)
	select {
	case <-s.Changes():
	default:
	}
	if err := netlink.LinkSetDown(v0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Changes():
	case <-time.After(time.Second):
		t.Error("no change after resubscribing")
	}
	close(s.done)
	s.wg.Wait()
}

// ethtoolIface names a link by index and name: the kernel checks that
// both match, so a client in the wrong namespace fails loudly.
func ethtoolIface(l netlink.Link) ethtool.Interface {
	return ethtool.Interface{Index: l.Attrs().Index, Name: l.Attrs().Name}
}

// --- Read on constructed dumps: merge, order, caches -------------------

// lacpBondMsg is bond0 (ifindex 2) in 802.3ad as a 6.x kernel sends it to
// root; with adInfo false the kernel found no active aggregator.
func lacpBondMsg(adInfo bool, activeSlave int) []byte {
	li := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	li.AddRtAttr(unix.IFLA_INFO_KIND, nl.ZeroTerminated("bond"))
	d := li.AddRtAttr(unix.IFLA_INFO_DATA, nil)
	d.AddRtAttr(unix.IFLA_BOND_MODE, nl.Uint8Attr(4))
	if activeSlave != 0 {
		d.AddRtAttr(unix.IFLA_BOND_ACTIVE_SLAVE, nl.Uint32Attr(uint32(activeSlave)))
	}
	d.AddRtAttr(unix.IFLA_BOND_MIIMON, nl.Uint32Attr(100))
	d.AddRtAttr(unix.IFLA_BOND_UPDELAY, nl.Uint32Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_DOWNDELAY, nl.Uint32Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_PEER_NOTIF_DELAY, nl.Uint32Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_ARP_INTERVAL, nl.Uint32Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_PRIMARY_RESELECT, nl.Uint8Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_FAIL_OVER_MAC, nl.Uint8Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_XMIT_HASH_POLICY, nl.Uint8Attr(2))
	d.AddRtAttr(unix.IFLA_BOND_MIN_LINKS, nl.Uint32Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_AD_LACP_ACTIVE, nl.Uint8Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_AD_LACP_RATE, nl.Uint8Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_AD_SELECT, nl.Uint8Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_TLB_DYNAMIC_LB, nl.Uint8Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_AD_ACTOR_SYS_PRIO, nl.Uint16Attr(65535))
	d.AddRtAttr(unix.IFLA_BOND_AD_USER_PORT_KEY, nl.Uint16Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_AD_ACTOR_SYSTEM, make([]byte, 6))
	if adInfo {
		ad := d.AddRtAttr(unix.IFLA_BOND_AD_INFO, nil)
		ad.AddRtAttr(unix.IFLA_BOND_AD_INFO_AGGREGATOR, nl.Uint16Attr(1))
		ad.AddRtAttr(unix.IFLA_BOND_AD_INFO_NUM_PORTS, nl.Uint16Attr(2))
		ad.AddRtAttr(unix.IFLA_BOND_AD_INFO_ACTOR_KEY, nl.Uint16Attr(15))
		ad.AddRtAttr(unix.IFLA_BOND_AD_INFO_PARTNER_KEY, nl.Uint16Attr(15))
		ad.AddRtAttr(unix.IFLA_BOND_AD_INFO_PARTNER_MAC, []byte{2, 0xfc, 0xce, 0x91, 0x32, 0x14})
	}
	return nltest.Link{Index: 2, Name: "bond0", Flags: unix.IFF_UP | unix.IFF_LOWER_UP, MTU: 1500, Oper: netlink.OperUp,
		HWAddr: net.HardwareAddr{2, 0x1d, 0x22, 0xfd, 0x7e, 0x72}, LinkInfo: li,
		Stats: &netlink.LinkStatistics64{RxBytes: 2000, TxBytes: 4000, RxPackets: 20, TxPackets: 40}}.Bytes()
}

// lacpSlaveMsg is one slave of bond0; agg 0 means "no aggregator".
func lacpSlaveMsg(index int, name string, agg uint16, txBytes uint64) []byte {
	li := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	li.AddRtAttr(unix.IFLA_INFO_KIND, nl.ZeroTerminated("veth"))
	li.AddRtAttr(unix.IFLA_INFO_SLAVE_KIND, nl.ZeroTerminated("bond"))
	d := li.AddRtAttr(unix.IFLA_INFO_SLAVE_DATA, nil)
	d.AddRtAttr(unix.IFLA_BOND_SLAVE_STATE, nl.Uint8Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_SLAVE_MII_STATUS, nl.Uint8Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_SLAVE_LINK_FAILURE_COUNT, nl.Uint32Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_SLAVE_PERM_HWADDR, []byte{2, 0, 0, 0, 0, byte(index)})
	d.AddRtAttr(unix.IFLA_BOND_SLAVE_QUEUE_ID, nl.Uint16Attr(0))
	if agg != 0 {
		d.AddRtAttr(unix.IFLA_BOND_SLAVE_AD_AGGREGATOR_ID, nl.Uint16Attr(agg))
		d.AddRtAttr(unix.IFLA_BOND_SLAVE_AD_ACTOR_OPER_PORT_STATE, nl.Uint8Attr(61))
		d.AddRtAttr(unix.IFLA_BOND_SLAVE_AD_PARTNER_OPER_PORT_STATE, nl.Uint16Attr(61))
	}
	return nltest.Link{Index: index, Name: name, Flags: unix.IFF_UP | unix.IFF_LOWER_UP | unix.IFF_SLAVE, MTU: 1500,
		Oper: netlink.OperUp, Master: 2, LinkInfo: li,
		Stats: &netlink.LinkStatistics64{TxBytes: txBytes, TxPackets: txBytes / 100}}.Bytes()
}

// lacpTree is the sysfs and procfs of bond0 with slaves e1, e2 enslaved
// in that order (e2 has the lower ifindex, so the dump lists it first).
func lacpTree(t testing.TB, fixture string) fstest.MapFS {
	t.Helper()
	proc, err := os.ReadFile("../../bonding/testdata/proc/" + fixture)
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	f := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s + "\n")} }
	return fstest.MapFS{
		"proc/net/bonding/bond0":                                  proc_(proc),
		"sys/class/net/bonding_masters":                           f("bond0"),
		"sys/class/net/bond0/bonding/mode":                        f("802.3ad 4"),
		"sys/class/net/bond0/bonding/slaves":                      f("e1 e2"),
		"sys/class/net/bond0/bonding/active_slave":                f("e1"),
		"sys/class/net/bond0/bonding/ad_aggregator":               f("1"),
		"sys/class/net/bond0/bonding/ad_actor_key":                f("15"),
		"sys/class/net/bond0/bonding/primary_reselect":            f("always 0"),
		"sys/class/net/e1/bonding_slave/ad_aggregator_id":         f("1"),
		"sys/class/net/e2/bonding_slave/ad_aggregator_id":         f("1"),
		"sys/class/net/e2/bonding_slave/ad_actor_oper_port_state": f("63"),
		"sys/class/net/e1/speed":                                  f("10000"),
		"sys/class/net/e2/speed":                                  f("10000"),
	}
}

func proc_(b []byte) *fstest.MapFile { return &fstest.MapFile{Data: b} }

// fakeLive is a Source without sockets, reading s.msgs and fsys.
func fakeLive(fsys fstest.MapFS, now *time.Time) *Source {
	return &Source{fsys: fsys, capNetAdmin: true, now: func() time.Time { return *now },
		refresh: liveConfigRefresh, cache: make(map[string]*liveBond), changes: make(chan struct{}, 1)}
}

// dumped takes msgs as a dump of theirs would: those of bonds and their
// slaves are kept, matched with their memos.
func (s *Source) dumped(msgs ...[]byte) {
	s.msgs, s.arena, s.msgMemos = s.msgs[:0], s.arena[:0], s.msgMemos[:0]
	for _, msg := range msgs {
		s.take(msg, isBondLink)
	}
}

func buildOnce(t *testing.T, s *Source, msgs ...[]byte) collector.Reading {
	t.Helper()
	s.dumped(msgs...)
	var r collector.Reading
	if err := s.build(&r, s.gen.Load(), s.now()); err != nil {
		t.Fatal(err)
	}
	return r
}

func slaveNames(b *bonding.Bond) string {
	var n []string
	for _, s := range b.Slaves {
		n = append(n, s.Name)
	}
	return strings.Join(n, " ")
}

func TestLiveBuildMerge(t *testing.T) {
	now := time.Unix(1000, 0)
	tree := lacpTree(t, "8023ad-6.8-healthy-root.txt")
	s := fakeLive(tree, &now)
	r := buildOnce(t, s, lacpBondMsg(true, 0), lacpSlaveMsg(3, "e2", 1, 5000), lacpSlaveMsg(4, "e1", 1, 7000))
	if len(r.Bonds) != 1 || r.Unprivileged || len(r.Warnings) != 0 {
		t.Fatalf("reading: %+v", r)
	}
	b := r.Bond("bond0")
	if got := slaveNames(b); got != "e1 e2" {
		t.Errorf("slaves %q, want enslave order e1 e2", got)
	}
	e1 := b.Slave("e1")
	if v, _ := e1.Counters.Get(bonding.TxBytes); v != 7000 {
		t.Errorf("e1 tx_bytes %d: counters must come from netlink", v)
	}
	if v, _ := b.Counters.Get(bonding.TxBytes); v != 4000 {
		t.Errorf("bond tx_bytes %d", v)
	}
	// netlink: state, port states; procfs: partner details, churn, speed.
	if *e1.State != "active" || *e1.Actor.PortState != 61 || *e1.Partner.PortState != 61 ||
		*e1.Partner.SystemMAC != "02:fc:ce:91:32:14" || *e1.Partner.PortNumber != 1 ||
		*e1.ActorChurnState != "monitoring" || *e1.SpeedMbps != 10000 || *e1.PermHWAddr != "02:00:00:00:00:04" {
		t.Errorf("e1 merged wrong: %s", mustJSON(e1))
	}
	if *b.DriverVersion != "6.8.0-142-generic" || *b.XmitHashPolicy != "layer2+3" || *b.LACP.PartnerMAC != "02:fc:ce:91:32:14" ||
		*b.LACP.SystemMAC != "02:1d:22:fd:7e:72" || b.LACP.NoActiveAggregator {
		t.Errorf("bond merged wrong: %s", mustJSON(b))
	}
	// netlink said "no active slave" (802.3ad has none): sysfs's stale
	// "e1" must not fill it.
	if b.ActiveSlave != nil {
		t.Errorf("active slave %q resurrected from sysfs", *b.ActiveSlave)
	}

	// A slave released: the cached sysfs list still names it, the
	// reading must not.
	r = buildOnce(t, s, lacpBondMsg(true, 0), lacpSlaveMsg(4, "e1", 1, 7100))
	if got := slaveNames(r.Bond("bond0")); got != "e1" {
		t.Errorf("after release: slaves %q", got)
	}
}

func TestLiveBuildNoAggregator(t *testing.T) {
	now := time.Unix(1000, 0)
	tree := lacpTree(t, "8023ad-6.8-healthy-root.txt")
	// procfs as a non-root reader sees it: no details, no aggregator info.
	tree["proc/net/bonding/bond0"] = proc_([]byte(strings.Join([]string{
		"Ethernet Channel Bonding Driver: v6.8.0", "", "Bonding Mode: IEEE 802.3ad Dynamic link aggregation",
		"Transmit Hash Policy: layer2+3 (2)", "MII Status: down", "MII Polling Interval (ms): 100", "Up Delay (ms): 0",
		"Down Delay (ms): 0", "", "802.3ad info", "LACP rate: fast", "Aggregator selection policy (ad_select): stable", "",
		"Slave Interface: e1", "MII Status: down", "Speed: Unknown", "Duplex: Unknown", "Link Failure Count: 2",
		"Permanent HW addr: 02:00:00:00:00:04", "Slave queue ID: 0", "Aggregator ID: N/A", "",
	}, "\n")))
	s := fakeLive(tree, &now)
	r := buildOnce(t, s, lacpBondMsg(false, 0), lacpSlaveMsg(4, "e1", 0, 0))
	b := r.Bond("bond0")
	if !b.LACP.NoActiveAggregator || b.LACP.AggregatorID != nil {
		t.Errorf("lacp: %s", mustJSON(b.LACP))
	}
	e1 := b.Slave("e1")
	// sysfs (cached) says aggregator 1; netlink says none.
	if e1.AggregatorID != nil || e1.Actor != nil || e1.Partner != nil {
		t.Errorf("e1: %s", mustJSON(e1))
	}
}

func TestLiveBuildCache(t *testing.T) {
	now := time.Unix(1000, 0)
	tree := lacpTree(t, "8023ad-6.8-healthy-root.txt")
	// An old kernel: bond attributes without the policy, so sysfs gives it.
	li := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	li.AddRtAttr(unix.IFLA_INFO_KIND, nl.ZeroTerminated("bond"))
	d := li.AddRtAttr(unix.IFLA_INFO_DATA, nil)
	d.AddRtAttr(unix.IFLA_BOND_MODE, nl.Uint8Attr(2))
	old := nltest.Link{Index: 2, Name: "bond0", MTU: 1500, LinkInfo: li}.Bytes()
	delete(tree, "proc/net/bonding/bond0")
	tree["sys/class/net/bond0/bonding/slaves"] = proc_([]byte("e1\n"))
	tree["sys/class/net/bond0/bonding/mode"] = proc_([]byte("balance-xor 2\n"))
	tree["sys/class/net/bond0/bonding/xmit_hash_policy"] = proc_([]byte("layer2 0\n"))
	s := fakeLive(tree, &now)
	policy := func() string {
		r := buildOnce(t, s, old, lacpSlaveMsg(4, "e1", 0, 0))
		p := r.Bond("bond0").XmitHashPolicy
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	if got := policy(); got != "layer2" {
		t.Fatalf("policy %s", got)
	}
	tree["sys/class/net/bond0/bonding/xmit_hash_policy"] = proc_([]byte("layer3+4 1\n"))
	now = now.Add(time.Second)
	if got := policy(); got != "layer2" {
		t.Errorf("sysfs re-read without a notification: %s", got)
	}
	s.changed() // a link notification
	if got := policy(); got != "layer3+4" {
		t.Errorf("after a notification: %s", got)
	}
	tree["sys/class/net/bond0/bonding/xmit_hash_policy"] = proc_([]byte("encap3+4 4\n"))
	now = now.Add(liveConfigRefresh)
	if got := policy(); got != "encap3+4" {
		t.Errorf("after the slow timer: %s", got)
	}
	// Hidden root-only files mark the reading unprivileged.
	tree["sys/class/net/bond0/bonding/mode"] = proc_([]byte("802.3ad 4\n"))
	tree["sys/class/net/bond0/bonding/ad_actor_key"] = proc_([]byte("\n"))
	s.changed()
	s.dumped(old)
	var r collector.Reading
	if err := s.build(&r, s.gen.Load(), s.now()); err != nil {
		t.Fatal(err)
	}
	if !r.Unprivileged {
		t.Error("hidden sysfs files did not mark the reading unprivileged")
	}
}

// TestLiveBuildNotified: on a kernel whose dump carries every option, a
// link notification is answered from the dump; sysfs is re-read only when
// the slave set changed or the slow timer says so.
func TestLiveBuildNotified(t *testing.T) {
	now := time.Unix(1000, 0)
	tree := lacpTree(t, "8023ad-6.8-healthy-root.txt")
	delete(tree, "proc/net/bonding/bond0")
	tree["sys/class/net/bond0/bonding/slaves"] = proc_([]byte("e1\n"))
	s := fakeLive(tree, &now)
	speed := func(msgs ...[]byte) (string, string) {
		r := buildOnce(t, s, msgs...)
		b := r.Bond("bond0")
		return fmt.Sprint(*b.Slave("e1").SpeedMbps), slaveNames(b)
	}
	bond, e1, e2 := lacpBondMsg(true, 0), lacpSlaveMsg(4, "e1", 1, 0), lacpSlaveMsg(3, "e2", 1, 0)
	if sp, _ := speed(bond, e1); sp != "10000" {
		t.Fatalf("speed %s", sp)
	}
	tree["sys/class/net/e1/speed"] = proc_([]byte("1000\n"))
	s.changed()
	if sp, _ := speed(bond, e1); sp != "10000" {
		t.Errorf("a notification re-read sysfs although netlink carries the options (speed %s)", sp)
	}
	// e2 enslaved: the notification and the new slave set re-read sysfs
	// at once, for the enslave order.
	tree["sys/class/net/bond0/bonding/slaves"] = proc_([]byte("e1 e2\n"))
	s.changed()
	if sp, names := speed(bond, e2, e1); sp != "1000" || names != "e1 e2" {
		t.Errorf("after enslaving e2: speed %s, slaves %q", sp, names)
	}
	tree["sys/class/net/e1/speed"] = proc_([]byte("100\n"))
	now = now.Add(liveConfigRefresh)
	if sp, _ := speed(bond, e2, e1); sp != "100" {
		t.Errorf("after the slow timer: speed %s", sp)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(err)
	}
	return string(b)
}

// BenchmarkLiveRead is one Read on this host: the RTM_GETLINK dump of
// every link, the scan that skips non-bond links, and (here, without the
// bonding driver) the ErrNoBonding check.
func BenchmarkLiveRead(b *testing.B) {
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Read(); err != nil && !errors.Is(err, collector.ErrNoBonding) {
			b.Fatal(err)
		}
	}
}

// BenchmarkLiveBuild is the user-space part of a steady-state Read of one
// 802.3ad bond with four slaves: decoding five messages, procfs parse (the
// one file read every tick), merge with the cached sysfs.
func BenchmarkLiveBuild(b *testing.B) {
	now := time.Unix(1000, 0)
	tree := lacpTree(b, "synthetic-8023ad-6.8-4slaves-root.txt")
	tree["sys/class/net/bond0/bonding/slaves"] = proc_([]byte("e1 e2 e3 e4\n"))
	s := fakeLive(tree, &now)
	msgs := [][]byte{lacpBondMsg(true, 0), lacpSlaveMsg(3, "e1", 1, 1), lacpSlaveMsg(4, "e2", 1, 1),
		lacpSlaveMsg(5, "e3", 1, 1), lacpSlaveMsg(6, "e4", 1, 1)}
	b.ReportAllocs()
	for b.Loop() {
		s.dumped(msgs...)
		var r collector.Reading
		if err := s.build(&r, 0, s.now()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEthtoolLinkMode is one LINKMODES_GET, the per-slave cost the
// live source pays on a configuration refresh (not every Read). veth
// answers from memory; a real NIC driver may ask its firmware.
func BenchmarkEthtoolLinkMode(b *testing.B) {
	inNewNetns(b)
	v0, _ := addVeth(b, "veth0", "veth1", 1500)
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if s.eth == nil {
		b.Skip("no ethtool netlink family")
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.eth.LinkMode(ethtoolIface(v0)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLiveBuildMemo: a slave whose message changed only in its counters
// is not decoded again, and reads the new counters; what procfs adds to
// its port states follows procfs (the memo's slave is not merged into);
// a message that changed otherwise is decoded anew.
func TestLiveBuildMemo(t *testing.T) {
	now := time.Unix(1000, 0)
	tree := lacpTree(t, "8023ad-6.8-healthy-root.txt")
	s := fakeLive(tree, &now)
	var bond *bonding.Bond
	build := func(tx uint64, agg uint16) *bonding.Slave {
		t.Helper()
		r := buildOnce(t, s, lacpBondMsg(true, 0), lacpSlaveMsg(3, "e2", 1, 5000), lacpSlaveMsg(4, "e1", agg, tx))
		bond = r.Bond("bond0")
		e1 := bond.Slave("e1")
		if e1 == nil {
			t.Fatalf("no e1: %s", mustJSON(r.Bonds))
		}
		return e1
	}
	build(7000, 1)
	memo := s.memo[4]
	if memo == nil {
		t.Fatal("e1's message not kept")
	}
	e1 := build(7100, 1)
	if s.memo[4] != memo {
		t.Error("e1 decoded again though only its counters changed")
	}
	if v, _ := e1.Counters.Get(bonding.TxBytes); v != 7100 {
		t.Errorf("e1 tx_bytes %d, want the new 7100", v)
	}
	if e1.Partner == nil || e1.Partner.SystemMAC == nil || *e1.Partner.SystemMAC != "02:fc:ce:91:32:14" {
		t.Fatalf("e1's partner from procfs: %s", mustJSON(e1.Partner))
	}

	proc := tree["proc/net/bonding/bond0"].Data
	tree["proc/net/bonding/bond0"] = proc_([]byte(strings.ReplaceAll(string(proc), "02:fc:ce:91:32:14", "02:fc:ce:91:32:99")))
	e1 = build(7200, 1)
	if *e1.Partner.SystemMAC != "02:fc:ce:91:32:99" || *e1.Partner.PortState != 61 {
		t.Errorf("after procfs changed: e1's partner %s, want system 02:fc:ce:91:32:99 and netlink's port state 61", mustJSON(e1.Partner))
	}
	// Here netlink gives every LACP field the bond has, so nothing of
	// procfs is merged into it; a kernel that gives fewer would merge
	// into the memo's own LACP, were it handed out.
	if bm := s.memo[2]; bm == nil || !bm.bondOK || bond.LACP == nil || bond.LACP == bm.bond.LACP {
		t.Error("the bond is not built from its memo, or hands out the memo's LACP, which merging writes into")
	}

	e1 = build(7300, 2)
	if s.memo[4] == memo {
		t.Error("e1 not decoded again though its aggregator changed")
	}
	if e1.AggregatorID == nil || *e1.AggregatorID != 2 {
		t.Errorf("e1 aggregator %v, want netlink's new 2", e1.AggregatorID)
	}
}

// TestLiveBuildTrustedCopy: a steady tick merges the procfs and sysfs
// copies made for the last one; a slave released since (still in the
// unchanged procfs text) does not come back through them, and one
// enslaved again is filled from procfs again.
func TestLiveBuildTrustedCopy(t *testing.T) {
	now := time.Unix(1000, 0)
	tree := lacpTree(t, "8023ad-6.8-healthy-root.txt")
	s := fakeLive(tree, &now)
	both := func() *bonding.Bond {
		r := buildOnce(t, s, lacpBondMsg(true, 0), lacpSlaveMsg(3, "e2", 1, 5000), lacpSlaveMsg(4, "e1", 1, 7000))
		return r.Bond("bond0")
	}
	both()
	c := s.cache["bond0"]
	first := c.procTrusted.bond.Slaves
	if b := both(); len(first) != 2 || &c.procTrusted.bond.Slaves[0] != &first[0] || slaveNames(b) != "e1 e2" {
		t.Fatalf("steady tick: trusted procfs copy made again or wrong (%s)", slaveNames(b))
	}
	now = now.Add(time.Second)
	r := buildOnce(t, s, lacpBondMsg(true, 0), lacpSlaveMsg(3, "e2", 1, 5100))
	b := r.Bond("bond0")
	if slaveNames(b) != "e2" || len(c.procTrusted.bond.Slaves) != 1 {
		t.Fatalf("after e1's release: slaves %q, trusted procfs copy has %d", slaveNames(b), len(c.procTrusted.bond.Slaves))
	}
	b = both()
	e1 := b.Slave("e1")
	if e1 == nil || e1.Partner == nil || e1.Partner.SystemMAC == nil || *e1.Partner.SystemMAC != "02:fc:ce:91:32:14" {
		t.Fatalf("e1 enslaved again: partner from procfs %s", mustJSON(e1))
	}
}

// TestLiveBuildMergedAgain: a tick whose link messages differ only in
// their counters, with the same files, gets the bond merged last time
// with the new counters (the same pointees, no merge); a reading handed
// out stays as it was through later ticks, also those that change
// procfs or a slave, and those ticks build anew.
func TestLiveBuildMergedAgain(t *testing.T) {
	now := time.Unix(1000, 0)
	tree := lacpTree(t, "8023ad-6.8-healthy-root.txt")
	s := fakeLive(tree, &now)
	build := func(tx uint64, agg uint16) *bonding.Bond {
		t.Helper()
		r := buildOnce(t, s, lacpBondMsg(true, 0), lacpSlaveMsg(3, "e2", 1, 5000), lacpSlaveMsg(4, "e1", agg, tx))
		return r.Bond("bond0")
	}
	first := build(7000, 1)
	firstJSON := mustJSON(first)
	second := build(7100, 1)
	if second.LACP != first.LACP || second.Slave("e1").Partner != first.Slave("e1").Partner {
		t.Error("a tick that changed only counters merged the bond anew")
	}
	if v, _ := second.Slave("e1").Counters.Get(bonding.TxBytes); v != 7100 {
		t.Errorf("e1 tx_bytes %d, want the new 7100", v)
	}
	if &second.Slaves[0] == &first.Slaves[0] {
		t.Error("two readings share their slaves' array")
	}
	secondJSON := mustJSON(second)

	proc := tree["proc/net/bonding/bond0"].Data
	tree["proc/net/bonding/bond0"] = proc_([]byte(strings.ReplaceAll(string(proc), "02:fc:ce:91:32:14", "02:fc:ce:91:32:99")))
	third := build(7200, 1)
	if p := third.Slave("e1").Partner; p == first.Slave("e1").Partner || p.SystemMAC == nil || *p.SystemMAC != "02:fc:ce:91:32:99" {
		t.Errorf("after procfs changed: e1's partner %s, want a new one from procfs", mustJSON(p))
	}
	fourth := build(7300, 2)
	if a := fourth.Slave("e1").AggregatorID; a == nil || *a != 2 {
		t.Errorf("after e1's message changed: aggregator %v, want netlink's new 2", a)
	}
	if got := mustJSON(first); got != firstJSON {
		t.Errorf("a reading changed after later ticks:\nbefore %s\nafter  %s", firstJSON, got)
	}
	if got := mustJSON(second); got != secondJSON {
		t.Errorf("a reading changed after later ticks:\nbefore %s\nafter  %s", secondJSON, got)
	}
}
