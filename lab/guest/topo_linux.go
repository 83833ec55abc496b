package guest

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NS is a network namespace and a netlink handle bound to it. The
// scenarios keep the bond under test in the VM's root namespace, where
// /proc/net/bonding and /sys/class/net (mounted there) show it to the
// collector, and its peer in a namespace of their own.
type NS struct {
	Name   string
	Handle netns.NsHandle
	NL     *netlink.Handle
}

// The main goroutine keeps the process's main thread for itself. Network
// namespace switches are per thread, and /proc/net (/proc/self/net) shows
// the namespace of the main thread: were a goroutine that switched
// namespaces ever scheduled on it, /proc/net/bonding would show the wrong
// namespace to the collector for the rest of the run.
func init() { runtime.LockOSThread() }

// Root returns the VM's root namespace (the one of pid 1).
func Root(t testing.TB) *NS {
	t.Helper()
	h, err := netns.GetFromPath("/proc/1/ns/net")
	if err != nil {
		t.Fatalf("root namespace: %v", err)
	}
	return bind(t, "root", h)
}

// NewNS creates an empty namespace with its loopback up. It goes away at
// the end of the test, and with it every interface inside (a veth's other
// end too).
func NewNS(t testing.TB, name string) *NS {
	t.Helper()
	var h netns.NsHandle
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		// netns.New moves the calling thread into the new namespace. The
		// thread stays locked, so it ends with this goroutine and no other
		// goroutine is ever scheduled into the namespace by accident.
		runtime.LockOSThread()
		h, err = netns.New()
	}()
	<-done
	if err != nil {
		t.Fatalf("new namespace %s: %v", name, err)
	}
	ns := bind(t, name, h)
	ns.Up(t, "lo")
	return ns
}

func bind(t testing.TB, name string, h netns.NsHandle) *NS {
	t.Helper()
	nl, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatalf("netlink handle in %s: %v", name, err)
	}
	t.Cleanup(func() { nl.Close(); h.Close() })
	return &NS{Name: name, Handle: h, NL: nl}
}

// Do runs fn on a thread inside the namespace. Sockets opened by fn belong
// to the namespace for their whole life, whichever thread uses them later.
func (ns *NS) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		// Locked and never unlocked: the thread dies with the goroutine
		// instead of going back to the pool in the wrong namespace.
		runtime.LockOSThread()
		if err := netns.Set(ns.Handle); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// Link returns the interface called name.
func (ns *NS) Link(t testing.TB, name string) netlink.Link {
	t.Helper()
	l, err := ns.NL.LinkByName(name)
	if err != nil {
		t.Fatalf("%s in %s: %v", name, ns.Name, err)
	}
	return l
}

// Up brings the interface up.
func (ns *NS) Up(t testing.TB, name string) {
	t.Helper()
	if err := ns.NL.LinkSetUp(ns.Link(t, name)); err != nil {
		t.Fatalf("%s up in %s: %v", name, ns.Name, err)
	}
}

// Down takes the interface down. Taken down at the far end, a veth loses
// carrier at this end: a pulled cable.
func (ns *NS) Down(t testing.TB, name string) {
	t.Helper()
	if err := ns.NL.LinkSetDown(ns.Link(t, name)); err != nil {
		t.Fatalf("%s down in %s: %v", name, ns.Name, err)
	}
}

// Delete removes the interface (a veth: both ends; a bond: it releases its
// slaves first).
func (ns *NS) Delete(t testing.TB, name string) {
	t.Helper()
	if err := ns.NL.LinkDel(ns.Link(t, name)); err != nil {
		t.Fatalf("deleting %s in %s: %v", name, ns.Name, err)
	}
}

// Addr adds an address ("198.18.1.1/24") to the interface.
func (ns *NS) Addr(t testing.TB, name, cidr string) {
	t.Helper()
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.NL.AddrAdd(ns.Link(t, name), a); err != nil {
		t.Fatalf("address %s on %s in %s: %v", cidr, name, ns.Name, err)
	}
}

// MAC returns the interface's hardware address.
func (ns *NS) MAC(t testing.TB, name string) string {
	t.Helper()
	return ns.Link(t, name).Attrs().HardwareAddr.String()
}

// Veth creates a veth pair: name in ns, peerName in peer, both up. The
// pair is deleted at the end of the test if it still exists.
func (ns *NS) Veth(t testing.TB, name string, peer *NS, peerName string) {
	t.Helper()
	v := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: name},
		PeerName:      peerName,
		PeerNamespace: netlink.NsFd(int(peer.Handle)),
	}
	if err := ns.NL.LinkAdd(v); err != nil {
		t.Fatalf("veth %s/%s: %v", name, peerName, err)
	}
	t.Cleanup(func() {
		// Namespaces die asynchronously; delete the pair now so the next
		// scenario can reuse the names.
		if l, err := ns.NL.LinkByName(name); err == nil {
			ns.NL.LinkDel(l)
		}
	})
	ns.Up(t, name)
	peer.Up(t, peerName)
}

// BondSpec holds the bond options a scenario sets; zero values leave the
// kernel's defaults.
type BondSpec struct {
	Mode           string // balance-rr, active-backup, ..., 802.3ad
	XmitHashPolicy string // layer2, layer3+4, ...
	LACPRate       string // slow, fast
	MIIMon         int    // ms; 0 means 100, so carrier loss is noticed
	Primary        string // a slave's name
}

// Bond creates a bond with spec, enslaves slaves in order (the order the
// transmit hash depends on) and brings it up. It is deleted at the end of
// the test if it still exists.
func (ns *NS) Bond(t testing.TB, name string, spec BondSpec, slaves ...string) {
	t.Helper()
	b := netlink.NewLinkBond(netlink.LinkAttrs{Name: name})
	b.Mode = netlink.StringToBondMode(spec.Mode)
	if b.Mode == netlink.BOND_MODE_UNKNOWN {
		t.Fatalf("bond %s: unknown mode %q", name, spec.Mode)
	}
	b.Miimon = spec.MIIMon
	if b.Miimon == 0 {
		b.Miimon = 100
	}
	if spec.XmitHashPolicy != "" {
		b.XmitHashPolicy = netlink.StringToBondXmitHashPolicy(spec.XmitHashPolicy)
	}
	if spec.LACPRate != "" {
		b.LacpRate = netlink.StringToBondLacpRate(spec.LACPRate)
	}
	if spec.Primary != "" {
		// The kernel takes the primary by index and remembers its name,
		// so it may be set before the slave is enslaved.
		b.Primary = ns.Link(t, spec.Primary).Attrs().Index
	}
	if err := ns.NL.LinkAdd(b); err != nil {
		t.Fatalf("bond %s (%+v): %v", name, spec, err)
	}
	t.Cleanup(func() {
		if l, err := ns.NL.LinkByName(name); err == nil {
			ns.NL.LinkDel(l)
		}
	})
	for _, s := range slaves {
		ns.Enslave(t, name, s)
	}
	ns.Up(t, name)
}

// Bridge creates a bridge over ports and brings it up: a learning switch,
// the peer the balance-tlb and balance-alb modes are made for.
func (ns *NS) Bridge(t testing.TB, name string, ports ...string) {
	t.Helper()
	if err := ns.NL.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
		t.Fatalf("bridge %s in %s: %v", name, ns.Name, err)
	}
	for _, port := range ports {
		if err := ns.NL.LinkSetMasterByIndex(ns.Link(t, port), ns.Link(t, name).Attrs().Index); err != nil {
			t.Fatalf("%s into bridge %s: %v", port, name, err)
		}
	}
	ns.Up(t, name)
}

// Enslave adds slave to bond. The kernel wants the slave down while it is
// enslaved; the bond brings it up again.
func (ns *NS) Enslave(t testing.TB, bond, slave string) {
	t.Helper()
	l := ns.Link(t, slave)
	if err := ns.NL.LinkSetDown(l); err != nil {
		t.Fatal(err)
	}
	if err := ns.NL.LinkSetMasterByIndex(l, ns.Link(t, bond).Attrs().Index); err != nil {
		t.Fatalf("enslaving %s to %s in %s: %v", slave, bond, ns.Name, err)
	}
	ns.Up(t, slave)
}

// Release removes slave from its bond.
func (ns *NS) Release(t testing.TB, slave string) {
	t.Helper()
	if err := ns.NL.LinkSetNoMaster(ns.Link(t, slave)); err != nil {
		t.Fatalf("releasing %s in %s: %v", slave, ns.Name, err)
	}
}

// SlaveInfo is the kernel's netlink view of an enslaved interface: state,
// MII status, link failure count, aggregator, LACP port states. It works in
// any namespace, unlike sysfs, which shows only the root one here.
func (ns *NS) SlaveInfo(t testing.TB, slave string) *netlink.BondSlave {
	t.Helper()
	bs, ok := ns.Link(t, slave).Attrs().Slave.(*netlink.BondSlave)
	if !ok {
		t.Fatalf("%s in %s is not a bond slave", slave, ns.Name)
	}
	return bs
}

// BondLink returns the kernel's netlink view of a bond.
func (ns *NS) BondLink(t testing.TB, name string) *netlink.Bond {
	t.Helper()
	b, ok := ns.Link(t, name).(*netlink.Bond)
	if !ok {
		t.Fatalf("%s in %s is not a bond", name, ns.Name)
	}
	return b
}

// Pair is a bond under test in the root namespace, its slaves' far ends in
// a peer namespace, and addresses on both sides for traffic.
type Pair struct {
	Root, Peer *NS
	Bond       string   // in Root
	Slaves     []string // in Root, enslave order
	Far        []string // in Peer: Far[i] is the other end of Slaves[i]
	Local      net.IP   // the bond's address
	Remote     net.IP   // the peer side's address
}

// NewPair creates n veth pairs dutN <-> farN between the root namespace and
// a new peer namespace, named after the test, with addresses from the
// 198.18.0.0/15 benchmarking range (RFC 2544) on subnet: the bond gets .1,
// the peer .2. The caller builds the bond and the peer side.
func NewPair(t testing.TB, subnet, n int) *Pair {
	t.Helper()
	// Scenarios share the VM's root namespace one after the other: each
	// must find it as the first found it, without bonds.
	if b, _ := os.ReadFile("/sys/class/net/bonding_masters"); len(strings.TrimSpace(string(b))) > 0 {
		t.Fatalf("bonds left over from an earlier scenario: %s", b)
	}
	p := &Pair{
		Root:   Root(t),
		Peer:   NewNS(t, "peer"),
		Bond:   "bond0",
		Local:  net.IPv4(198, 18, byte(subnet), 1),
		Remote: net.IPv4(198, 18, byte(subnet), 2),
	}
	for i := range n {
		s, f := fmt.Sprintf("dut%d", i), fmt.Sprintf("far%d", i)
		p.Root.Veth(t, s, p.Peer, f)
		p.Slaves = append(p.Slaves, s)
		p.Far = append(p.Far, f)
	}
	return p
}

// LocalCIDR and RemoteCIDR are the addresses with their /24.
func (p *Pair) LocalCIDR() string  { return p.Local.String() + "/24" }
func (p *Pair) RemoteCIDR() string { return p.Remote.String() + "/24" }
