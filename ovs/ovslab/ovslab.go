//go:build linux

// Package ovslab starts a private, real Open vSwitch for tests: ovsdb-server
// and ovs-vswitchd (Debian's openvswitch-switch, installed by
// scripts/test-deps.sh) in a temporary run directory, ovs-vswitchd in its
// own network namespace with the userspace datapath over veth pairs, so no
// kernel module and no system OVS is involved. ovs-vsctl and ovs-appctl,
// which tests use as judges, are wrapped here too. Tests only.
package ovslab

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func run(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// RealOVS is one private Open vSwitch: two bridges br-a and br-b joined by
// three veth pairs a0..a2 <-> b0..b2 bonded as bond-a and bond-b
// (balance-tcp, LACP active, fast), two more bridges br-c and br-d joined
// by c0,c1 <-> d0,d1 bonded active-backup as ab-c and ab-d, br-e and br-f
// joined by e0,e1 <-> f0,f1 bonded balance-slb as slb-e and slb-f, and one host
// port on each of br-a (h0, its far end h0p) and br-b (h1, far end h1p).
type RealOVS struct {
	t      testing.TB
	NS     string
	RunDir string
}

// requireOVS skips (fails under CI=true) when the tools are missing.
func Require(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the real-OVS tests need root (CI runs them as root)")
		}
		t.Skip("the real-OVS tests need root")
	}
	for _, tool := range []string{"ovsdb-server", "ovs-vswitchd", "ovsdb-tool", "ovs-vsctl", "ovs-appctl", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s missing: scripts/test-deps.sh installs openvswitch-switch", tool)
			}
			t.Skipf("%s missing (scripts/test-deps.sh installs openvswitch-switch)", tool)
		}
	}
	if _, err := os.Stat("/usr/share/openvswitch/vswitch.ovsschema"); err != nil {
		t.Fatalf("OVS schema: %v", err)
	}
}

// StartRealOVS builds the topology and waits until both LACP bonds have
// negotiated.
func Start(t testing.TB) *RealOVS {
	t.Helper()
	Require(t)
	o := &RealOVS{t: t, NS: fmt.Sprintf("bondtop-ovs-%d", os.Getpid()), RunDir: t.TempDir()}
	env := o.env()
	run(t, nil, "ip", "netns", "add", o.NS)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", o.NS).Run() })
	ipn := func(args ...string) { run(t, nil, "ip", append([]string{"-n", o.NS}, args...)...) }
	// No IPv6 chatter: counters move only with LACP and our frames.
	run(t, nil, "ip", "netns", "exec", o.NS, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
	pairs := [][2]string{{"a0", "b0"}, {"a1", "b1"}, {"a2", "b2"}, {"c0", "d0"}, {"c1", "d1"}, {"e0", "f0"}, {"e1", "f1"}, {"h0", "h0p"}, {"h1", "h1p"}}
	for _, p := range pairs {
		ipn("link", "add", p[0], "type", "veth", "peer", "name", p[1])
		ipn("link", "set", p[0], "up")
		ipn("link", "set", p[1], "up")
	}
	db := filepath.Join(o.RunDir, "conf.db")
	run(t, env, "ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema")
	o.daemon("ovsdb-server", db, "--remote=punix:"+filepath.Join(o.RunDir, "db.sock"),
		"--pidfile="+filepath.Join(o.RunDir, "ovsdb-server.pid"), "--log-file="+filepath.Join(o.RunDir, "ovsdb-server.log"))
	o.waitFile(filepath.Join(o.RunDir, "db.sock"))
	o.Vsctl("--no-wait", "init")
	// ip netns exec execs the daemon in place, so the pid in its pidfile
	// names the control socket.
	o.daemon("ip", "netns", "exec", o.NS, "ovs-vswitchd", "unix:"+filepath.Join(o.RunDir, "db.sock"),
		"--pidfile="+filepath.Join(o.RunDir, "ovs-vswitchd.pid"), "--log-file="+filepath.Join(o.RunDir, "ovs-vswitchd.log"))
	o.waitFile(filepath.Join(o.RunDir, "ovs-vswitchd.pid"))
	for _, br := range []string{"br-a", "br-b", "br-c", "br-d", "br-e", "br-f"} {
		o.Vsctl("add-br", br, "--", "set", "bridge", br, "datapath_type=netdev")
	}
	o.Vsctl("add-bond", "br-a", "bond-a", "a0", "a1", "a2", "bond_mode=balance-tcp", "lacp=active",
		"other_config:lacp-time=fast", "other_config:bond-rebalance-interval=1000")
	o.Vsctl("add-bond", "br-b", "bond-b", "b0", "b1", "b2", "bond_mode=balance-tcp", "lacp=active",
		"other_config:lacp-time=fast", "other_config:bond-rebalance-interval=0")
	o.Vsctl("add-bond", "br-c", "ab-c", "c0", "c1", "bond_mode=active-backup", "bond_updelay=100", "bond_downdelay=50")
	o.Vsctl("add-bond", "br-d", "ab-d", "d0", "d1", "bond_mode=active-backup")
	o.Vsctl("add-bond", "br-e", "slb-e", "e0", "e1", "bond_mode=balance-slb")
	o.Vsctl("add-bond", "br-f", "slb-f", "f0", "f1", "bond_mode=balance-slb")
	o.Vsctl("add-port", "br-a", "h0")
	o.Vsctl("add-port", "br-b", "h1")
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, b := o.Appctl("bond/show", "bond-a"), o.Appctl("bond/show", "bond-b")
		if strings.Contains(a, "lacp_status: negotiated") && strings.Contains(b, "lacp_status: negotiated") &&
			strings.Count(a, ": enabled") == 3 && strings.Count(b, ": enabled") == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("LACP did not negotiate in 20s:\n%s\n%s", a, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return o
}

func (o *RealOVS) env() []string {
	return []string{"OVS_RUNDIR=" + o.RunDir, "OVS_DBDIR=" + o.RunDir, "OVS_LOGDIR=" + o.RunDir, "OVS_SYSCONFDIR=" + o.RunDir}
}

// daemon starts a process in the foreground and stops it when the test ends.
func (o *RealOVS) daemon(name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), o.env()...)
	if err := cmd.Start(); err != nil {
		o.t.Fatalf("start %s: %v", name, err)
	}
	o.t.Cleanup(func() {
		_ = cmd.Process.Signal(unix.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
}

func (o *RealOVS) waitFile(path string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("%s did not appear", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Vsctl runs ovs-vsctl against the private database.
func (o *RealOVS) Vsctl(args ...string) string {
	o.t.Helper()
	return strings.TrimSpace(run(o.t, o.env(), "ovs-vsctl", append([]string{"--db=unix:" + filepath.Join(o.RunDir, "db.sock"), "--timeout=10"}, args...)...))
}

// Appctl runs ovs-appctl against the private ovs-vswitchd.
func (o *RealOVS) Appctl(args ...string) string {
	o.t.Helper()
	pid, err := os.ReadFile(filepath.Join(o.RunDir, "ovs-vswitchd.pid"))
	if err != nil {
		o.t.Fatal(err)
	}
	ctl := filepath.Join(o.RunDir, "ovs-vswitchd."+strings.TrimSpace(string(pid))+".ctl")
	o.waitFile(ctl)
	return run(o.t, o.env(), "ovs-appctl", append([]string{"-t", ctl, "--timeout=10"}, args...)...)
}

// IP runs ip inside the namespace.
func (o *RealOVS) IP(args ...string) { run(o.t, nil, "ip", append([]string{"-n", o.NS}, args...)...) }

// KernelCounter reads a link's counter from sysfs inside the namespace.
func (o *RealOVS) KernelCounter(link, counter string) uint64 {
	out := run(o.t, nil, "ip", "netns", "exec", o.NS, "cat", "/sys/class/net/"+link+"/statistics/"+counter)
	n, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		o.t.Fatal(err)
	}
	return n
}

// SendUDPFlows sends frames of flows UDP flows (distinct source ports)
// from h0p to h1p across bond-a, after one broadcast from h1p so that
// br-a has learned h1p's MAC behind bond-a.
func (o *RealOVS) SendUDPFlows(flows, perFlow int) {
	o.t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		o.t.Fatal(err)
	}
	defer orig.Close()
	ns, err := netns.GetFromName(o.NS)
	if err != nil {
		o.t.Fatal(err)
	}
	defer ns.Close()
	if err := netns.Set(ns); err != nil {
		o.t.Fatal(err)
	}
	defer func() {
		if err := netns.Set(orig); err != nil {
			panic(err) // the thread stays locked and dies with the goroutine
		}
	}()
	h0p, err := net.InterfaceByName("h0p")
	if err != nil {
		o.t.Fatal(err)
	}
	h1p, err := net.InterfaceByName("h1p")
	if err != nil {
		o.t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err != nil {
		o.t.Fatal(err)
	}
	defer unix.Close(fd)
	send := func(ifi *net.Interface, frame []byte) {
		sa := &unix.SockaddrLinklayer{Ifindex: ifi.Index, Halen: 6}
		copy(sa.Addr[:], frame[:6])
		if err := unix.Sendto(fd, frame, 0, sa); err != nil {
			o.t.Fatalf("send on %s: %v", ifi.Name, err)
		}
	}
	bcast := udpFrame(net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, h1p.HardwareAddr, 7, 100)
	for range 3 {
		send(h1p, bcast)
	}
	time.Sleep(300 * time.Millisecond)
	for i := range perFlow {
		for f := range flows {
			send(h0p, udpFrame(h1p.HardwareAddr, h0p.HardwareAddr, uint16(20000+f), 1000))
		}
		if i%20 == 19 {
			time.Sleep(time.Millisecond)
		}
	}
}

// udpFrame builds an Ethernet/IPv4/UDP frame of size bytes (checksums
// left zero: OVS hashes the headers and does not check them).
func udpFrame(dst, src net.HardwareAddr, sport uint16, size int) []byte {
	f := make([]byte, size)
	copy(f[0:6], dst)
	copy(f[6:12], src)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(size-14))
	copy(ip[12:16], []byte{10, 77, 0, 1})
	copy(ip[16:20], []byte{10, 77, 0, 2})
	udp := ip[20:]
	binary.BigEndian.PutUint16(udp[0:], sport)
	binary.BigEndian.PutUint16(udp[2:], 5001)
	binary.BigEndian.PutUint16(udp[4:], uint16(size-34))
	return f
}

// EnterNS moves the calling goroutine's thread into the lab's network
// namespace until the test ends, so netlink sees the lab's links.
func (o *RealOVS) EnterNS(t testing.TB) {
	t.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := netns.GetFromName(o.NS)
	if err != nil {
		t.Fatal(err)
	}
	if err := netns.Set(ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ns.Close()
		if err := netns.Set(orig); err != nil {
			t.Errorf("restore network namespace: %v", err)
			return // the thread stays locked and dies with the goroutine
		}
		orig.Close()
		runtime.UnlockOSThread()
	})
}

// JudgeBondShow is the judges' own reading of ovs-appctl bond/show: a few
// regular expressions, independent of ParseBondShow.
type JudgeBond struct {
	Enabled map[string]bool
	Active  string
	LACP    string
	Buckets map[string]map[int]int64
}

var (
	judgeMemberRE = regexp.MustCompile(`(?m)^member (\S+): (enabled|disabled)$`)
	judgeActiveRE = regexp.MustCompile(`(?m)^active member mac: \S+\((\S+)\)$`)
	judgeLACPRE   = regexp.MustCompile(`(?m)^lacp_status: (\S+)$`)
	judgeHashRE   = regexp.MustCompile(`(?m)^  hash (\d+): (\d+) kB load$`)
)

func JudgeBondShow(text string) JudgeBond {
	j := JudgeBond{Enabled: map[string]bool{}, Buckets: map[string]map[int]int64{}}
	for _, m := range judgeMemberRE.FindAllStringSubmatch(text, -1) {
		j.Enabled[m[1]] = m[2] == "enabled"
	}
	if m := judgeActiveRE.FindStringSubmatch(text); m != nil && m[1] != "none" {
		j.Active = m[1]
	}
	if m := judgeLACPRE.FindStringSubmatch(text); m != nil {
		j.LACP = m[1]
	}
	// Each member's block runs to the next "member" line.
	locs := judgeMemberRE.FindAllStringSubmatchIndex(text, -1)
	for i, loc := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		name := text[loc[2]:loc[3]]
		for _, h := range judgeHashRE.FindAllStringSubmatch(text[loc[1]:end], -1) {
			if j.Buckets[name] == nil {
				j.Buckets[name] = map[int]int64{}
			}
			n, _ := strconv.Atoi(h[1])
			kb, _ := strconv.ParseInt(h[2], 10, 64)
			j.Buckets[name][n] = kb
		}
	}
	return j
}

// JudgeLACPStates finds a member's "actor state:" and "partner state:"
// lines in lacp/show text.
func JudgeLACPStates(text, member string) [2]string {
	i := strings.Index(text, "member: "+member+":")
	if i < 0 {
		return [2]string{"<member missing>", "<member missing>"}
	}
	block := text[i:]
	if j := strings.Index(block[1:], "member: "); j >= 0 {
		block = block[:j+1]
	}
	var out [2]string
	for k, re := range []*regexp.Regexp{regexp.MustCompile(`actor state: (.*)`), regexp.MustCompile(`partner state: (.*)`)} {
		if m := re.FindStringSubmatch(block); m != nil {
			out[k] = strings.TrimSpace(m[1])
		}
	}
	return out
}
