//go:build linux

package flowmeter

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

func openMeter(t testing.TB, opts Options) Meter {
	t.Helper()
	m, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func read(t testing.TB, m Meter) Reading {
	t.Helper()
	r, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// totals sums a reading's bytes and packets per direction, lost included.
func totals(r Reading) (bytes, packets [2]uint64) {
	for _, f := range r.Flows {
		bytes[f.Direction] += f.Bytes
		packets[f.Direction] += f.Packets
	}
	for _, l := range r.Lost {
		bytes[l.Direction] += l.Bytes
		packets[l.Direction] += l.Packets
	}
	return
}

// within fails unless got is within frac (plus slack bytes) of want.
func within(t testing.TB, what string, got, want uint64, frac float64, slack uint64) {
	t.Helper()
	diff := int64(got) - int64(want)
	if diff < 0 {
		diff = -diff
	}
	if float64(diff) > frac*float64(want)+float64(slack) {
		t.Errorf("%s: meter %d, interface counters %d (off by %d, allowed %.1f%% + %d)", what, got, want, diff, frac*100, slack)
	} else {
		t.Logf("%s: meter %d, interface counters %d", what, got, want)
	}
}

// mapsSize is what Reading.MapSize says for Options.MaxFlows n: IPv4
// flows, other flows, ICMP errors.
func mapsSize(n int) int { return 2*n + errorFlows(n) }

func findFlow(r Reading, match func(*Flow) bool) *Flow {
	for i := range r.Flows {
		if match(&r.Flows[i]) {
			return &r.Flows[i]
		}
	}
	return nil
}

// ourFilters lists the flow meter's cls_bpf filters on a link, and whether
// the link has a clsact qdisc at all.
func ourFilters(t testing.TB, name string) (filters []string, clsact bool) {
	t.Helper()
	lk, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	clsact, err = hasClsact(lk)
	if err != nil {
		t.Fatal(err)
	}
	if !clsact {
		return nil, false
	}
	for _, parent := range []uint32{netlink.HANDLE_MIN_INGRESS, netlink.HANDLE_MIN_EGRESS} {
		fs, err := netlink.FilterList(lk, parent)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if bf, ok := f.(*netlink.BpfFilter); ok && strings.HasPrefix(bf.Name, filterPrefix) {
				filters = append(filters, bf.Name)
			}
		}
	}
	return filters, true
}

// tcxPrograms counts the programs attached through TCX to a link.
func tcxPrograms(t testing.TB, ifindex int) int {
	t.Helper()
	n := 0
	for _, at := range []ebpf.AttachType{ebpf.AttachTCXIngress, ebpf.AttachTCXEgress} {
		res, err := link.QueryPrograms(link.QueryOptions{Target: ifindex, Attach: at})
		if err != nil {
			t.Fatalf("query TCX programs: %v", err)
		}
		n += len(res.Programs)
	}
	return n
}

func TestMeterCountsEveryFrame(t *testing.T) {
	for _, tc := range []struct {
		name   string
		force  bool
		attach string
	}{{"tcx", false, "tcx"}, {"clsact", true, "clsact"}} {
		t.Run(tc.name, func(t *testing.T) {
			l := newVethLab(t)
			m := openMeter(t, Options{ForceClsact: tc.force, KernelStats: true})
			closed := false
			defer func() {
				if !closed {
					m.Close()
				}
			}()
			if err := m.Sync(map[int]string{l.ifindex: "fm0"}); err != nil {
				t.Fatal(err)
			}
			if r := read(t, m); r.Attach != tc.attach || r.Source != SourceEBPF {
				t.Fatalf("attached through %q (%s), want %q", r.Attach, r.Source, tc.attach)
			}
			start := time.Now()
			before := l.counters(t)

			ports4 := l.udpFlows(t, l.peer4, 8, 20, 300)
			ports6 := l.udpFlows(t, l.peer6, 4, 10, 500)
			tcpPort := l.tcpTransfer(t, 2<<20)
			echoID := l.ping(t, 3)
			time.Sleep(300 * time.Millisecond)

			after := l.counters(t)
			r := read(t, m)
			bytes, packets := totals(r)
			within(t, "tx bytes", bytes[Tx], after.TxBytes-before.TxBytes, 0.001, 200)
			within(t, "rx bytes", bytes[Rx], after.RxBytes-before.RxBytes, 0.001, 200)
			// veth counts a GSO super-packet once; the meter counts its
			// segments, so it sees at least as many packets.
			if packets[Tx] < after.TxPackets-before.TxPackets {
				t.Errorf("tx packets: meter %d < interface %d", packets[Tx], after.TxPackets-before.TxPackets)
			}

			for _, p := range ports4 {
				f := findFlow(r, func(f *Flow) bool {
					return f.Direction == Tx && f.Proto == unix.IPPROTO_UDP && f.SrcPort == p && f.Src == l.own4
				})
				if f == nil {
					t.Errorf("no tx flow from UDP port %d", p)
					continue
				}
				if want := uint64(20 * (300 + 8 + 20 + 14)); f.Bytes != want || f.Packets != 20 {
					t.Errorf("UDP flow %d: %d bytes %d packets, want %d and 20", p, f.Bytes, f.Packets, want)
				}
				if f.Dst != l.peer4 || f.DstPort < 9000 || f.DstPort >= 9008 || f.EtherType != 0x0800 || f.Slave != "fm0" || f.Ifindex != l.ifindex {
					t.Errorf("UDP flow %d: key %+v", p, f.Key)
				}
				if f.SrcMAC != l.ownMAC || f.DstMAC != l.peerMAC {
					t.Errorf("UDP flow %d: MACs %x -> %x, want %x -> %x", p, f.SrcMAC, f.DstMAC, l.ownMAC, l.peerMAC)
				}
				if f.FirstSeen.Before(start.Add(-time.Second)) || f.LastSeen.After(time.Now().Add(time.Second)) || f.LastSeen.Before(f.FirstSeen) {
					t.Errorf("UDP flow %d: seen %v .. %v, test ran from %v", p, f.FirstSeen, f.LastSeen, start)
				}
			}
			for _, p := range ports6 {
				f := findFlow(r, func(f *Flow) bool {
					return f.Direction == Tx && f.Proto == unix.IPPROTO_UDP && f.SrcPort == p && f.Src == l.own6
				})
				if want := uint64(10 * (500 + 8 + 40 + 14)); f == nil || f.Bytes != want || f.Dst != l.peer6 {
					t.Errorf("UDP/IPv6 flow %d: %+v, want %d bytes to %v", p, f, want, l.peer6)
				}
			}
			// The peer answers closed ports with errors that quote our
			// datagrams: the meter keeps the quoted flow.
			unreach := findFlow(r, func(f *Flow) bool {
				return f.Direction == Rx && f.Proto == unix.IPPROTO_ICMP && f.ICMPType == 3 && f.ICMPCode == 3
			})
			if unreach == nil {
				t.Error("no port unreachable received")
			} else if q := unreach.Quoted; q.Src != l.own4 || q.Dst != l.peer4 || q.Proto != unix.IPPROTO_UDP || q.DstPort < 9000 || q.DstPort >= 9008 {
				t.Errorf("port unreachable quotes %+v", q)
			}
			tcp := findFlow(r, func(f *Flow) bool {
				return f.Direction == Tx && f.Proto == unix.IPPROTO_TCP && f.DstPort == tcpPort
			})
			if tcp == nil {
				t.Fatal("no tx TCP flow")
			}
			if tcp.Bytes < 2<<20 || tcp.Packets*1514 < tcp.Bytes {
				t.Errorf("TCP flow: %d bytes in %d packets: GSO segments not counted?", tcp.Bytes, tcp.Packets)
			}
			if tcp.SkbHash == 0 || !tcp.L4Hash || tcp.IngressIfindex != 0 {
				t.Errorf("TCP flow from a local socket: skb hash %#x (layer 4: %v), ingress ifindex %d", tcp.SkbHash, tcp.L4Hash, tcp.IngressIfindex)
			}
			for _, d := range []struct {
				dir Direction
				typ uint8
			}{{Tx, 8}, {Rx, 0}} {
				f := findFlow(r, func(f *Flow) bool {
					return f.Direction == d.dir && f.Proto == unix.IPPROTO_ICMP && f.ICMPType == d.typ && f.DstPort == echoID
				})
				if f == nil || f.Packets != 3 {
					t.Errorf("echo type %d id %d (%v): %+v, want 3 packets", d.typ, echoID, d.dir, f)
				}
			}
			// Every socket buffer (a GSO super-packet once, as veth
			// counts it) ran a program once, timed.
			skbs := after.TxPackets - before.TxPackets + after.RxPackets - before.RxPackets
			if r.KernelRuns < skbs || r.KernelCPU <= 0 {
				t.Errorf("kernel statistics: %d runs in %v for %d socket buffers", r.KernelRuns, r.KernelCPU, skbs)
			} else {
				t.Logf("the programs ran %d times, %v in all (%v per run)", r.KernelRuns, r.KernelCPU, r.KernelCPU/time.Duration(r.KernelRuns))
			}
			if r.MapEntries != len(r.Flows) || r.MapSize != mapsSize(DefaultMaxFlows) || len(r.Lost) != 0 {
				t.Errorf("map %d/%d for %d flows, lost %v", r.MapEntries, r.MapSize, len(r.Flows), r.Lost)
			}

			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			closed = true
			if fs, clsact := ourFilters(t, "fm0"); len(fs) > 0 || clsact {
				t.Errorf("after Close: filters %q, clsact qdisc left: %v", fs, clsact)
			}
			if n := tcxPrograms(t, l.ifindex); n != 0 {
				t.Errorf("after Close: %d TCX programs", n)
			}
		})
	}
}

// tcpTransfer sends n bytes over one TCP connection to a sink in the peer
// and returns the sink's port.
func (l *vethLab) tcpTransfer(t testing.TB, n int) uint16 {
	t.Helper()
	var ln net.Listener
	l.inPeer(t, func() {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(l.peer4.String(), "0"))
		if err != nil {
			t.Fatal(err)
		}
	})
	defer ln.Close()
	done := make(chan int64)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- -1
			return
		}
		got, _ := io.Copy(io.Discard, c)
		c.Close()
		done <- got
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := <-done; got != int64(n) {
		t.Fatalf("sink got %d bytes, want %d", got, n)
	}
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

// ping sends n ICMP echo requests to the peer and waits for the replies;
// it returns the identifier.
func (l *vethLab) ping(t testing.TB, n int) uint16 {
	t.Helper()
	c, err := icmp.ListenPacket("ip4:icmp", l.own4.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id := uint16(0x4242)
	for seq := range n {
		msg := icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: int(id), Seq: seq, Data: []byte("bondtop")}}
		b, err := msg.Marshal(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteTo(b, &net.IPAddr{IP: l.peer4.AsSlice()}); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1500)
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		for {
			k, _, err := c.ReadFrom(buf)
			if err != nil {
				t.Fatalf("echo reply: %v", err)
			}
			if rm, err := icmp.ParseMessage(1, buf[:k]); err == nil && rm.Type == ipv4.ICMPTypeEchoReply {
				break
			}
		}
	}
	return id
}

// nopProgram is a TC program of another tool: it lets every packet pass.
func nopProgram(t testing.TB) *ebpf.Program {
	t.Helper()
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.SchedCLS, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, -1), asm.Return()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// A qdisc and filters that are not the meter's survive it, and the meter
// runs first among them.
func TestMeterLeavesOthersAlone(t *testing.T) {
	l := newVethLab(t)
	other := nopProgram(t)
	if err := netlink.QdiscAdd(&netlink.Clsact{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: l.ifindex, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}}); err != nil {
		t.Fatal(err)
	}
	foreign := &netlink.BpfFilter{FilterAttrs: netlink.FilterAttrs{LinkIndex: l.ifindex, Parent: netlink.HANDLE_MIN_EGRESS, Handle: 1, Protocol: unix.ETH_P_ALL, Priority: 1}, Fd: other.FD(), Name: "another-tool", DirectAction: true}
	if err := netlink.FilterAdd(foreign); err != nil {
		t.Fatal(err)
	}
	tl, err := link.AttachTCX(link.TCXOptions{Interface: l.ifindex, Program: other, Attach: ebpf.AttachTCXEgress})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()

	for _, force := range []bool{true, false} {
		m := openMeter(t, Options{ForceClsact: force})
		if err := m.Sync(map[int]string{l.ifindex: "fm0"}); err != nil {
			t.Fatal(err)
		}
		before := l.counters(t)
		l.udpFlows(t, l.peer4, 2, 10, 100)
		time.Sleep(100 * time.Millisecond)
		after := l.counters(t)
		bytes, _ := totals(read(t, m))
		within(t, fmt.Sprintf("tx bytes beside another program (clsact %v)", force), bytes[Tx], after.TxBytes-before.TxBytes, 0.001, 200)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		fs, err := netlink.FilterList(l.link(t, "fm0"), netlink.HANDLE_MIN_EGRESS)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) != 1 || fs[0].(*netlink.BpfFilter).Name != "another-tool" {
			t.Errorf("after Close (clsact %v): egress filters %+v, want only another-tool's", force, fs)
		}
		if n := tcxPrograms(t, l.ifindex); n != 1 {
			t.Errorf("after Close: %d TCX programs, want the other tool's one", n)
		}
	}
}

// TestHelperMeterProcess is the bondtop a crash test kills: it attaches
// through clsact and waits.
func TestHelperMeterProcess(t *testing.T) {
	ifindex, err := strconv.Atoi(os.Getenv("FLOWMETER_HELPER_IFINDEX"))
	if err != nil {
		t.Skip("run by TestMeterRemovesCrashLeftovers")
	}
	m, err := Open(Options{ForceClsact: true})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if err := m.Sync(map[int]string{ifindex: "fm0"}); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
	os.Exit(2)
}

// A bondtop killed with SIGKILL leaves its clsact filters; the next one
// removes them (and the qdisc the dead one added) as it opens, and
// detaching from a slave in Sync removes ours.
func TestMeterRemovesCrashLeftovers(t *testing.T) {
	l := newVethLab(t)
	// The child inherits this thread's network namespace.
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMeterProcess$")
	cmd.Env = append(os.Environ(), "FLOWMETER_HELPER_IFINDEX="+strconv.Itoa(l.ifindex))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q", line)
	}
	if err := cmd.Process.Signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	fs, clsact := ourFilters(t, "fm0")
	if len(fs) != 2 || !clsact {
		t.Fatalf("after kill -9: filters %q, clsact %v; want the dead meter's two", fs, clsact)
	}
	t.Logf("left by the killed meter: %q", fs)

	m := openMeter(t, Options{})
	defer m.Close()
	if fs, clsact := ourFilters(t, "fm0"); len(fs) > 0 || clsact {
		t.Errorf("after Open: filters %q, clsact %v", fs, clsact)
	}

	m2 := openMeter(t, Options{ForceClsact: true})
	defer m2.Close()
	if err := m2.Sync(map[int]string{l.ifindex: "fm0"}); err != nil {
		t.Fatal(err)
	}
	// A live meter's filters are not stale to another.
	m3 := openMeter(t, Options{})
	m3.Close()
	if fs, _ := ourFilters(t, "fm0"); len(fs) != 2 {
		t.Errorf("a second meter removed the live one's filters: %q", fs)
	}
	if err := m2.Sync(nil); err != nil {
		t.Fatal(err)
	}
	if fs, clsact := ourFilters(t, "fm0"); len(fs) > 0 || clsact {
		t.Errorf("after Sync without the slave: filters %q, clsact %v", fs, clsact)
	}
}

// A full map: the bytes of flows without an entry count as lost, and the
// totals still match the interface.
func TestMeterOverflow(t *testing.T) {
	l := newVethLab(t)
	m := openMeter(t, Options{MaxFlows: 16})
	defer m.Close()
	if err := m.Sync(map[int]string{l.ifindex: "fm0"}); err != nil {
		t.Fatal(err)
	}
	before := l.counters(t)
	l.udpFlows(t, l.peer4, 100, 5, 200)
	time.Sleep(100 * time.Millisecond)
	after := l.counters(t)
	r := read(t, m)
	bytes, _ := totals(r)
	within(t, "tx bytes, lost included", bytes[Tx], after.TxBytes-before.TxBytes, 0.001, 200)
	within(t, "rx bytes, lost included", bytes[Rx], after.RxBytes-before.RxBytes, 0.001, 200)
	// The flow map is full; ICMP errors (the peer's port unreachables)
	// have a map of their own.
	if r.MapEntries < 16 || r.MapSize != mapsSize(16) {
		t.Errorf("map %d/%d, want 16 flows at least, size %d", r.MapEntries, r.MapSize, mapsSize(16))
	}
	var lostTx uint64
	for _, lo := range r.Lost {
		if lo.Direction == Tx && lo.Slave == "fm0" {
			lostTx = lo.Bytes
		}
	}
	// At least 84 flows of 5 x 242 bytes found no entry.
	if lostTx < 84*5*242 {
		t.Errorf("lost tx bytes %d, want at least %d", lostTx, 84*5*242)
	}
}

// Flows idle longer than IdleTimeout leave the map.
func TestMeterDeletesIdleFlows(t *testing.T) {
	l := newVethLab(t)
	m := openMeter(t, Options{IdleTimeout: 300 * time.Millisecond})
	defer m.Close()
	if err := m.Sync(map[int]string{l.ifindex: "fm0"}); err != nil {
		t.Fatal(err)
	}
	l.udpFlows(t, l.peer4, 5, 2, 100)
	udp := func(r Reading) (n int) {
		for _, f := range r.Flows {
			if f.Proto == unix.IPPROTO_UDP {
				n++
			}
		}
		return n
	}
	if n := udp(read(t, m)); n != 5 {
		t.Fatalf("%d UDP flows right after sending, want 5", n)
	}
	time.Sleep(600 * time.Millisecond)
	// (The link's own IPv6 multicast reports may still come and go.)
	if n := udp(read(t, m)); n != 0 {
		t.Errorf("%d UDP flows after the idle timeout", n)
	}
	em := m.(*ebpfMeter)
	var k meterFlow4Key
	var v meterFlowCounters
	for it := em.objs.Flows4.Iterate(); it.Next(&k, &v); {
		if k.Proto == unix.IPPROTO_UDP {
			t.Errorf("an idle flow is still in the kernel's map: %+v", k)
		}
	}
}

// The sampled meter, every frame (1:1) and 1 in 10.
func TestSampledMeter(t *testing.T) {
	for _, tc := range []struct {
		rate, flows, n int
		frac           float64
	}{{1, 10, 100, 0.02}, {10, 20, 1000, 0.15}} {
		t.Run(fmt.Sprintf("1:%d", tc.rate), func(t *testing.T) {
			l := newVethLab(t)
			m := openMeter(t, Options{NoEBPF: true, SampleRate: tc.rate})
			defer m.Close()
			if err := m.Sync(map[int]string{l.ifindex: "fm0"}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			before := l.counters(t)
			l.udpFlows(t, l.peer4, tc.flows, tc.n, 400)
			time.Sleep(300 * time.Millisecond)
			after := l.counters(t)
			r := read(t, m)
			if len(r.Warnings) > 0 {
				t.Errorf("warnings: %q", r.Warnings)
			}
			if r.Source != SourceSampled || r.SampleRate != tc.rate || r.Why == "" || r.Attach != "af_packet" {
				t.Errorf("reading says %s 1:%d (%q) via %q", r.Source, r.SampleRate, r.Why, r.Attach)
			}
			bytes, _ := totals(r)
			within(t, "tx bytes (estimate)", bytes[Tx], after.TxBytes-before.TxBytes, tc.frac, 0)
			if tc.rate == 1 {
				f := findFlow(r, func(f *Flow) bool { return f.Direction == Tx && f.Proto == unix.IPPROTO_UDP && f.DstPort == 9000 })
				if want := uint64(tc.n * (400 + 8 + 20 + 14)); f == nil || f.Bytes != want || f.SrcMAC != l.ownMAC || f.Src != l.own4 {
					t.Errorf("flow to port 9000: %+v, want %d bytes", f, want)
				}
			}
		})
	}
}

// Slaves come and go: Sync attaches a new one, and detaches one that was
// deleted meanwhile without an error.
func TestMeterSyncFollowsSlaves(t *testing.T) {
	l := newVethLab(t)
	for _, force := range []bool{false, true} {
		m := openMeter(t, Options{ForceClsact: force})
		if err := m.Sync(map[int]string{l.ifindex: "fm0"}); err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "fm1"}, PeerName: "fm1peer"}); err != nil {
			t.Fatal(err)
		}
		fm1 := l.up(t, "fm1")
		l.up(t, "fm1peer")
		both := map[int]string{l.ifindex: "fm0", fm1.Attrs().Index: "fm1"}
		if err := m.Sync(both); err != nil {
			t.Fatal(err)
		}
		// A frame sent on fm1 is counted there.
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err != nil {
			t.Fatal(err)
		}
		frame := frameOf(hashVectors()[3].flow, 0)
		if err := unix.Sendto(fd, frame, 0, &unix.SockaddrLinklayer{Ifindex: fm1.Attrs().Index, Halen: 6}); err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		r := read(t, m)
		if f := findFlow(r, func(f *Flow) bool { return f.Slave == "fm1" && f.SrcPort == 1000 }); f == nil || f.Bytes != uint64(len(frame)) {
			t.Errorf("clsact %v: the frame on fm1: %+v", force, f)
		}
		if err := netlink.LinkDel(fm1); err != nil {
			t.Fatal(err)
		}
		if err := m.Sync(map[int]string{l.ifindex: "fm0"}); err != nil {
			t.Errorf("clsact %v: detaching from a deleted slave: %v", force, err)
		}
		if r := read(t, m); findFlow(r, func(f *Flow) bool { return f.Slave == "fm1" }) != nil || len(r.Lost) != 0 {
			t.Errorf("clsact %v: fm1's flows outlive it", force)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if fs, clsact := ourFilters(t, "fm0"); len(fs) > 0 || clsact {
			t.Errorf("after Close: filters %q, clsact %v", fs, clsact)
		}
	}
}

// A frame with its VLAN tag in the frame (sent by a packet socket, so no
// offload takes it out): both meters key it by the tag and the inner
// headers, and mark the tag as in the frame.
func TestMeterTagInFrame(t *testing.T) {
	for _, noEBPF := range []bool{false, true} {
		t.Run(map[bool]string{false: "ebpf", true: "sampled"}[noEBPF], func(t *testing.T) {
			l := newVethLab(t)
			m := openMeter(t, Options{NoEBPF: noEBPF, SampleRate: 1})
			defer m.Close()
			if err := m.Sync(map[int]string{l.ifindex: "fm0"}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			fl := hashVectors()[3].flow // 10.0.0.1:1000 -> 10.0.0.2:53
			fl.VLAN = 5<<13 | 100
			frame := frameOf(fl, 0x8100)
			fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			for range 3 {
				if err := unix.Sendto(fd, frame, 0, &unix.SockaddrLinklayer{Ifindex: l.ifindex, Halen: 6}); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(200 * time.Millisecond)
			r := read(t, m)
			f := findFlow(r, func(f *Flow) bool { return f.Direction == Tx && f.SrcPort == 1000 && f.DstPort == 53 })
			if f == nil || f.VLAN != fl.VLAN || f.FrameTPID != 0x8100 || f.EtherType != 0x0800 || f.Src != fl.Src || f.Bytes != 3*uint64(len(frame)) || f.Packets != 3 {
				t.Fatalf("tagged frame: %+v", f)
			}
			// The bond would hash it as a non-IP frame: layer2 of
			// 0x8100 (see TestPacketHashVectors).
			if p := f.Packet(); p.EtherType != 0x8100 || p.Src.IsValid() {
				t.Errorf("hash input of an in-frame tag: %+v", p)
			}
		})
	}
}

// TestHelperOpenUnprivileged opens a meter as an unprivileged user and
// prints the error.
func TestHelperOpenUnprivileged(t *testing.T) {
	if os.Getenv("FLOWMETER_HELPER_UNPRIVILEGED") == "" {
		t.Skip("run by TestOpenUnprivileged")
	}
	m, err := Open(Options{})
	if err == nil {
		m.Close()
		fmt.Println("opened")
		os.Exit(0)
	}
	fmt.Println(err)
	os.Exit(0)
}

// Without root, Open fails and says what root and CAP_NET_RAW would add.
func TestOpenUnprivileged(t *testing.T) {
	needRoot(t)
	// nobody must be able to run a copy of this test binary.
	dir, err := os.MkdirTemp("", "flowmeter-unpriv")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := dir + "/flowmeter.test"
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperOpenUnprivileged$")
	cmd.Env = append(os.Environ(), "FLOWMETER_HELPER_UNPRIVILEGED=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper as nobody: %v: %s", err, out)
	}
	msg := string(out)
	t.Logf("as nobody: %s", msg)
	for _, want := range []string{"no flow meter", "Root", "CAP_BPF", "CAP_NET_RAW alone would sample 1 in 100"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
}
