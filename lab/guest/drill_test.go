//go:build linux

package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bondtop/bondtop/drill"
)

// eventTolerance is how far the drill's time of a bond event may be from
// the kernel's notification as this test receives it: two processes
// reading the same netlink message, each as late as the emulated CPUs let
// it run.
const eventTolerance = 150

// drillHold is the hold of the lab's drills: long enough that a soft
// failover without GARP shows as a gap of the whole hold.
const drillHold = 3 * time.Second

// abPair is active-backup over 2 slaves (dut0 active) in the root
// namespace, the peer a bridge (10 s MAC ageing) running bondtop serve.
func abPair(t *testing.T, subnet int, primary string) *Pair {
	t.Helper()
	p := NewPair(t, subnet, 2)
	p.Root.Bond(t, p.Bond, BondSpec{Mode: "active-backup", MIIMon: 50, Primary: primary}, p.Slaves...)
	p.Root.Addr(t, p.Bond, p.LocalCIDR())
	PeerBridge(t, p, 10*time.Second)
	Eventually(t, 10*time.Second, "dut0 active", func() (bool, string) {
		a := Sysfs(t, p.Bond, "bonding/active_slave")
		return a == "dut0", a
	})
	StartServe(t, p)
	return p
}

// checkRestored: the drill says restored, and the kernel agrees: the slave
// up, the active slave as before, no state file left.
func checkRestored(t *testing.T, p *Pair, res *drill.Result, slave, active string) {
	t.Helper()
	if !res.Restored {
		t.Errorf("drill says not restored")
	}
	if up := p.Root.Link(t, slave).Attrs().RawFlags&syscall.IFF_UP != 0; !up {
		t.Errorf("%s left admin down", slave)
	}
	if active != "" {
		if a := Sysfs(t, p.Bond, "bonding/active_slave"); a != active {
			t.Errorf("active slave %s after the drill, was %s", a, active)
		}
	}
	if _, err := os.Stat("/run/bondtop/drill-" + p.Bond + ".json"); err == nil {
		t.Errorf("state file left behind")
	}
}

func phaseOf(t *testing.T, res *drill.Result, name string) *drill.Phase {
	t.Helper()
	for i := range res.Phases {
		if res.Phases[i].Name == name {
			return &res.Phases[i]
		}
	}
	t.Fatalf("no %s phase in %+v", name, res)
	return nil
}

func msOf(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}

func logPhases(t *testing.T, res *drill.Result) {
	t.Helper()
	for _, ph := range res.Phases {
		t.Logf("%s (%s): event %.1f ms, active %s at %.1f ms, gap tx %.1f ms rx %.1f ms (open %v), lost %s/%s, reordered %s, GARP %d (first %.1f ms) NA %d, LACP settled %.1f ms",
			ph.Name, ph.Action, msOf(ph.EventMs), ph.ActiveSlave, msOf(ph.ActiveMs), msOf(ph.GapTxMs), msOf(ph.GapRxMs), ph.GapRxOpen,
			Show(ph.LostTx), Show(ph.LostRx), Show(ph.Reordered), ph.GARP.Count, msOf(ph.GARP.FirstMs), ph.GARP.UnsolNA, msOf(ph.LACPSettleMs))
	}
	t.Logf("findings: %q", res.Findings)
	var text bytes.Buffer
	res.WriteText(&text)
	t.Logf("as bondtop drill prints it:\n%s", text.String())
}

// TestDrillActiveBackup: active-backup, miimon 50, `bondtop drill --how
// down` on the active slave. The failover gap must stay under 300 ms each
// way; the gratuitous ARPs the drill counts leaving the new active slave
// must equal num_grat_arp and what the bridge received; the drill's send
// gap (an estimate: the peer's loss over the rate) must agree within 50 ms
// with an independent receiver on the bridge timing the same datagrams;
// its bond event must agree with the kernel's own notification of the new
// active slave; and the bond ends as it began.
func TestDrillActiveBackup(t *testing.T) {
	p := abPair(t, 160, "")
	SetBondOption(t, p.Bond, "num_grat_arp", "2")
	aw := watchActive(t, p.Bond)
	rcv := ListenArrivals(t, p.Peer, "br0", p.Local, p.Root.Link(t, p.Bond).Attrs().HardwareAddr)
	peerErrs := UDPReceiveErrors(t, p.Peer)
	start := time.Now()
	res, stderr, code := RunDrill(t, p.Bond, "--peer", p.Remote.String(), "--hold", drillHold.String(), "--yes")
	end := time.Now()
	peerErrs = UDPReceiveErrors(t, p.Peer) - peerErrs
	if code != 0 || res == nil {
		t.Fatalf("drill exit %d: %s", code, stderr)
	}
	logPhases(t, res)
	if res.Slave != "dut0" || res.How != drill.Down || res.Mode != "active-backup" {
		t.Errorf("drill of %s --how %s in %s, want dut0 down active-backup", res.Slave, res.How, res.Mode)
	}
	fo := phaseOf(t, res, "failover")
	fb := phaseOf(t, res, "failback")
	// num_grat_arp 2: the kernels at hand send only the first when the
	// link monitor fails over (the second notification's check ran
	// before the failover); the drill must count what left, as the
	// bridge saw it, and say so when it is fewer.
	n := rcv.GARPs(fo.ActionTime, fb.ActionTime)
	t.Logf("gratuitous ARPs: the drill counted %d leaving, the bridge received %d, num_grat_arp 2", fo.GARP.Count, n)
	Measure(t, "drill_failover_garps[num_grat_arp=2]", float64(fo.GARP.Count), "")
	if n != fo.GARP.Count || n == 0 {
		t.Errorf("the bridge received %d gratuitous ARPs in the failover phase, the drill counted %d leaving", n, fo.GARP.Count)
	}
	if fo.GARP.Count < 2 && FindingWith(res, "num_grat_arp asks for 2") == "" {
		t.Errorf("%d GARPs of num_grat_arp 2 and no finding: %q", fo.GARP.Count, res.Findings)
	}
	// The failover phase's stream: from its baseline to the end of the
	// hold (the failback's stream is another test).
	window := func() (time.Time, time.Time) {
		return fo.ActionTime.Add(-400 * time.Millisecond), fo.ActionTime.Add(drillHold - 100*time.Millisecond)
	}
	// The longest silence over the window the drill reckons its send gap
	// in: from half its baseline before the action to the end of the hold.
	gap, _ := rcv.LongestGap(fo.ActionTime.Add(-250*time.Millisecond), fo.ActionTime.Add(drillHold))
	peerStall := float64(rcv.SendStall(window()).Microseconds()) / 1000
	t.Logf("the peer's own longest pause in sending (as it left br0): %.1f ms", peerStall)
	indep := float64(gap.Microseconds()) / 1000
	t.Logf("independent receiver on br0: longest failover gap %.1f ms; drill's estimate %.1f ms", indep, msOf(fo.GapTxMs))
	if d := rcv.Drops(); d > 0 {
		t.Errorf("the independent receiver dropped %d frames: its gap is not the wire's", d)
	}
	Measure(t, "drill_failover_gap_tx[active-backup,miimon=50]", msOf(fo.GapTxMs), "ms")
	Measure(t, "drill_failover_gap_rx[active-backup,miimon=50]", msOf(fo.GapRxMs), "ms")
	Measure(t, "drill_failover_gap_independent[active-backup,miimon=50]", indep, "ms")
	// The drill reckons its gap from how many datagrams the peer did not
	// receive, as if all went missing in one run at the failover; the
	// receiver on br0 times the wire. Each datagram that crossed the wire
	// and was then dropped by the peer's full socket buffer (its process
	// waiting for the emulated CPUs) is in the first and not the second:
	// a millisecond more (1000 a second) that the two may differ.
	slack := 50 + float64(peerErrs)*1000/float64(drill.DefaultRate)
	t.Logf("the longest pauses on the wire: %v; the peer's namespace dropped %d datagrams after it (Udp InErrors)",
		rcv.Pauses(fo.ActionTime.Add(-250*time.Millisecond), fo.ActionTime.Add(drillHold), 5), peerErrs)
	if d := msOf(fo.GapTxMs) - indep; d > slack || d < -50 {
		t.Errorf("drill's tx gap %.1f ms, the independent receiver's %.1f ms: want from 50 ms less to %.0f ms more", msOf(fo.GapTxMs), indep, slack)
	}
	kernel := aw.after(t, fo.ActionTime, p.Root.Link(t, "dut1").Attrs().Index)
	kernelMs := float64(kernel.Sub(fo.ActionTime).Microseconds()) / 1000
	t.Logf("kernel notified dut1 active %.1f ms after the action; drill's active_ms %.1f, event_ms %.1f", kernelMs, msOf(fo.ActiveMs), msOf(fo.EventMs))
	Measure(t, "drill_failover_event[active-backup,miimon=50]", msOf(fo.EventMs), "ms")
	if fo.ActiveMs == nil || *fo.ActiveMs-kernelMs > eventTolerance || *fo.ActiveMs-kernelMs < -eventTolerance {
		t.Errorf("drill's active change at %.1f ms, the kernel's notification at %.1f ms", msOf(fo.ActiveMs), kernelMs)
	}
	// Under 300 ms each way, or, where the kernel itself took longer to
	// fail over (an emulated CPU: taking a device down waits for RCU
	// grace periods under the rtnl lock the link monitor needs), no more
	// than the kernel's own time and 100 ms.
	// The receive gap may also hold a pause of the peer's own sender
	// (both ends share the VM's CPUs): that much more is allowed.
	bar := max(300, kernelMs+100)
	if fo.GapTxMs == nil || *fo.GapTxMs >= bar {
		t.Errorf("failover tx gap %.1f ms, want under %.0f (the kernel failed over in %.1f ms)", msOf(fo.GapTxMs), bar, kernelMs)
	}
	if fo.GapRxMs == nil || *fo.GapRxMs >= bar+peerStall {
		t.Errorf("failover rx gap %.1f ms, want under %.0f (the kernel failed over in %.1f ms, the peer paused %.1f ms)", msOf(fo.GapRxMs), bar+peerStall, kernelMs, peerStall)
	}
	if fo.ActiveSlave != "dut1" {
		t.Errorf("active slave after the failover %q, want dut1", fo.ActiveSlave)
	}
	if fb.EventMs == nil {
		t.Errorf("failback: no bond event after dut0 came up")
	}
	if end.Sub(start) > 20*time.Second {
		t.Errorf("the drill took %v", end.Sub(start))
	}
	checkRestored(t, p, res, "dut0", "dut0")
}

// TestDrillSoftFailover: `--how active --direction rx` behind a bridge
// that ages its MAC table after 10 s, with an independent receiver on the
// host counting 1000 datagrams a second from the peer side. The bond keeps
// IPv6, as a server's does. With num_grat_arp 0 (num_unsol_na 0,
// resend_igmp 0) the bond tells the switch nothing, and a host that only
// receives loses the peer's traffic for the whole hold: the independent
// receiver and the drill both see a gap of the hold (within 10 %), and the
// finding names num_grat_arp and num_unsol_na with the gap. With
// num_grat_arp 1 the gap is under 100 ms. Either way, nothing but the
// bond's notifications reaches the bridge from the host between the
// failover and the failback (the drill's measurement teaches the switch
// nothing), and the drill says so.
func TestDrillSoftFailover(t *testing.T) {
	for _, garp := range []string{"0", "1"} {
		t.Run("num_grat_arp="+garp, func(t *testing.T) {
			p := abPair(t, 161, "")
			SetBondOption(t, p.Bond, "num_grat_arp", garp)
			SetBondOption(t, p.Bond, "num_unsol_na", garp)
			SetBondOption(t, p.Bond, "resend_igmp", "0")
			// IPv6 stays on the bond; only its router solicitations,
			// which keep coming with backoff for an hour and would teach
			// the bridge at a time of their own, are stopped. (An admin's
			// host may send them: the drill would name them.)
			if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+p.Bond+"/router_solicitations", []byte("0"), 0); err != nil {
				t.Fatal(err)
			}
			mac := p.Root.Link(t, p.Bond).Attrs().HardwareAddr
			var ports []*MACFrames
			for _, far := range p.Far {
				ports = append(ports, ListenMAC(t, p.Peer, far, mac))
			}
			// The bond's own start-up chatter (DAD, MLD reports) is over.
			for _, m := range ports {
				m.WaitQuiet(t, 2*time.Second, 20*time.Second)
			}
			host := StartHostDatagrams(t, p, 9999, 1000)
			// bondtop serve's own sending, as it leaves br0.
			peer := ListenArrivalsExcept(t, p.Peer, "br0", p.Local, mac, 9999)
			fdb := WatchFDB(t, p.Peer, mac)
			rxc := WatchRx(t, p.Slaves...)
			res, stderr, code := RunDrill(t, p.Bond, "--peer", p.Remote.String(), "--how", "active", "--direction", "rx",
				"--hold", drillHold.String(), "--yes")
			if code != 0 || res == nil {
				t.Fatalf("drill exit %d: %s", code, stderr)
			}
			logPhases(t, res)
			fo := phaseOf(t, res, "failover")
			fb := phaseOf(t, res, "failback")
			// What reached the bridge from the host between the two
			// actions: all a switch could learn the move from.
			for i, m := range ports {
				t.Logf("frames from the bond's MAC on %s from the failover to the failback: %q", p.Far[i], m.Between(fo.ActionTime, fb.ActionTime))
			}
			t.Logf("the bridge's table for the bond's MAC, from the failover on: %q", fdb.Changes(fo.ActionTime))
			mid0, mid1 := fo.ActionTime.Add(500*time.Millisecond), fb.ActionTime.Add(-200*time.Millisecond)
			t.Logf("mid-hold: packets received by %v %v; the independent receiver got %d datagrams", p.Slaves, rxc.Delta(mid0, mid1), host.Arrivals(mid0, mid1))
			// The scene holds only while the bridge knows the bond's MAC:
			// an entry aged out (10 s without a frame from the host)
			// floods the peer's datagrams to both ports.
			if w := fdb.Where(fo.ActionTime, fb.ActionTime); slices.Contains(w, "none") {
				t.Errorf("the bridge forgot the bond's MAC during the hold (%q): it flooded, the scene is void", w)
			}
			for _, f := range ports[1].Between(fo.ActionTime, fb.ActionTime) {
				if garp == "0" || !(strings.HasSuffix(f, "ARP op 1") || strings.HasSuffix(f, "ICMPv6 type 136")) {
					t.Errorf("the host sent %s by dut1 during the hold (num_grat_arp %s)", f, garp)
				}
			}
			for _, ph := range []*drill.Phase{fo, fb} {
				if ph.HostFrames == nil || *ph.HostFrames != 0 {
					t.Errorf("%s: the drill counts %s frames of the host's own (%q)", ph.Name, Show(ph.HostFrames), ph.HostFrameKinds)
				}
			}
			var text bytes.Buffer
			res.WriteText(&text)
			if !strings.Contains(text.String(), "none of its frames left meanwhile") {
				t.Errorf("the drill's output does not say the host kept quiet:\n%s", text.String())
			}
			if fo.GapTxMs != nil {
				t.Errorf("--direction rx measured a tx gap")
			}
			from, to := fo.ActionTime.Add(-250*time.Millisecond), fb.ActionTime.Add(time.Second)
			// The receiver's outage is reckoned on its sender's clock:
			// both ends share the VM's emulated CPUs, and a sender they
			// run late (by up to a second on a loaded machine) is a
			// silence the bond did not cause. It spans the datagrams
			// around the hold: from 2 s before the failover to 100 that
			// came after the failback (a starved sender may need seconds
			// for them).
			Eventually(t, 20*time.Second, "100 of the independent datagrams after the failback", func() (bool, string) {
				n := host.Arrivals(fb.ActionTime, time.Now().Add(time.Hour))
				return n >= 100, fmt.Sprint(n)
			})
			if n := host.Arrivals(fo.ActionTime.Add(-2*time.Second), fo.ActionTime); n == 0 {
				t.Fatalf("the independent receiver got nothing in the 2 s before the failover")
			}
			outage := host.Outage(fo.ActionTime.Add(-2*time.Second), time.Now())
			indepMs := float64(outage.Microseconds()) / 1000
			silence, _ := host.LongestGap(from, to)
			stall := float64(host.SendStall(from, to).Microseconds()) / 1000
			peerStall := float64(peer.SendStall(from, to).Microseconds()) / 1000
			rx := msOf(fo.GapRxMs)
			// The hold as it ran: at least the hold asked for (its timer
			// starts once the failover's move returned), at most from the
			// failover's action to when the drill saw the failback's
			// move. On emulated CPUs that a loaded machine starves, the
			// drill's steps around the hold take longer than on a real
			// host, and a pause of a sender or a receiver blurs either end
			// by up to a few hundred milliseconds.
			minHeld := float64(drillHold.Milliseconds())
			maxHeld := float64(fb.ActionTime.Sub(fo.ActionTime).Microseconds())/1000 + max(msOf(fb.ActiveMs), 0)
			t.Logf("hold %v as it ran: %.1f to %.1f ms", drillHold, minHeld, maxHeld)
			t.Logf("independent receiver on the host: outage %.1f ms (the longest silence it saw %.1f ms, its sender's own longest pause %.1f ms); the drill's failover rx gap %.1f ms (bondtop serve's own longest pause in sending %.1f ms)",
				indepMs, float64(silence.Microseconds())/1000, stall, rx, peerStall)
			Measure(t, "drill_soft_failover_gap_rx[num_grat_arp="+garp+"]", rx, "ms")
			Measure(t, "drill_soft_failover_outage_independent[num_grat_arp="+garp+"]", indepMs, "ms")
			if garp == "0" {
				if indepMs < 0.9*minHeld || indepMs > 1.1*maxHeld {
					t.Errorf("without GARP the independent receiver's outage was %.1f ms, want the hold (%.0f to %.0f ms) within 10 %%", indepMs, minHeld, maxHeld)
				}
				// The drill's failover gap runs open to the failback's
				// action (the failback phase's own gap, from then to the
				// first datagram, holds any pause of bondtop serve's).
				if !fo.GapRxOpen || rx < 0.9*minHeld || rx > 1.1*maxHeld {
					t.Errorf("without GARP the drill's rx gap was %.1f ms (open %v), want the hold (%.0f to %.0f ms) within 10 %%, open to the failback", rx, fo.GapRxOpen, minHeld, maxHeld)
				}
				f := FindingWith(res, "num_grat_arp", "num_unsol_na", fmt.Sprintf("rx gap %.0f ms", rx))
				if f == "" {
					t.Errorf("no finding names num_grat_arp and num_unsol_na with the gap %.0f ms: %q", rx, res.Findings)
				}
				if fo.GARP.Count+fo.GARP.UnsolNA != 0 {
					t.Errorf("num_grat_arp 0, yet %d GARPs and %d NAs counted", fo.GARP.Count, fo.GARP.UnsolNA)
				}
			} else {
				// Under 100 ms. Both ends share the VM's emulated CPUs,
				// which a loaded machine leaves idle for up to seconds: a
				// sender pause inside the outage lengthens it on the
				// sender's clock, and is not the bond's.
				// And the outage cannot end before the gratuitous ARP left:
				// a kernel on starved emulated CPUs sends it late (on a
				// real host within milliseconds of the move).
				late := max(msOf(fo.GARP.FirstMs), 0)
				if indepMs >= 100+stall+late {
					t.Errorf("with num_grat_arp 1 the independent receiver's outage was %.1f ms, want under 100 (and its sender's own pause, %.1f ms, and the GARP's %.1f ms after the move)", indepMs, stall, late)
				}
				// The drill times the silence this host received: the
				// time bondtop serve spent not sending is in it.
				if rx >= 100+peerStall+late {
					t.Errorf("with num_grat_arp 1 the drill's rx gap was %.1f ms, want under 100 (and bondtop serve's own longest pause, %.1f ms, and the GARP's %.1f ms after the move)", rx, peerStall, late)
				}
				if fo.GARP.Count != 1 {
					t.Errorf("num_grat_arp 1, %d GARPs counted", fo.GARP.Count)
				}
				for _, f := range res.Findings {
					if strings.Contains(f, "num_grat_arp") || strings.Contains(f, "of its own") {
						t.Errorf("finding on a soft failover with GARP: %q", f)
					}
				}
			}
			checkRestored(t, p, res, "dut0", "dut0")
		})
	}
}

// TestDrillPrimaryFailback: primary dut0 with updelay 0 and 2000. The
// failback phase is reported for both; the kernel itself fails back to
// dut0, with updelay 2000 no sooner than 2 s after dut0 came up, and the
// drill's time of that change agrees with the kernel's notification.
func TestDrillPrimaryFailback(t *testing.T) {
	for _, updelay := range []int{0, 2000} {
		t.Run(fmt.Sprintf("updelay=%d", updelay), func(t *testing.T) {
			p := abPair(t, 162, "dut0")
			SetBondOption(t, p.Bond, "updelay", fmt.Sprint(updelay))
			aw := watchActive(t, p.Bond)
			res, stderr, code := RunDrill(t, p.Bond, "--peer", p.Remote.String(), "--hold", drillHold.String(), "--yes")
			if code != 0 || res == nil {
				t.Fatalf("drill exit %d: %s", code, stderr)
			}
			logPhases(t, res)
			fb := phaseOf(t, res, "failback")
			if fb.ActiveSlave != "dut0" || fb.ActiveMs == nil {
				t.Fatalf("failback: active %q at %.1f ms, want dut0", fb.ActiveSlave, msOf(fb.ActiveMs))
			}
			kernel := aw.after(t, fb.ActionTime, p.Root.Link(t, "dut0").Attrs().Index)
			kernelMs := float64(kernel.Sub(fb.ActionTime).Microseconds()) / 1000
			t.Logf("kernel notified dut0 active again %.1f ms after dut0 came up; the drill %.1f ms", kernelMs, *fb.ActiveMs)
			Measure(t, fmt.Sprintf("drill_failback_active[updelay=%d]", updelay), *fb.ActiveMs, "ms")
			Measure(t, fmt.Sprintf("drill_failback_gap_tx[updelay=%d]", updelay), msOf(fb.GapTxMs), "ms")
			Measure(t, fmt.Sprintf("drill_failback_gap_rx[updelay=%d]", updelay), msOf(fb.GapRxMs), "ms")
			if d := *fb.ActiveMs - kernelMs; d > eventTolerance || d < -eventTolerance {
				t.Errorf("drill's failback at %.1f ms, kernel's %.1f ms", *fb.ActiveMs, kernelMs)
			}
			if *fb.ActiveMs < float64(updelay) {
				t.Errorf("failback after %.1f ms, before updelay %d", *fb.ActiveMs, updelay)
			}
			if fb.GapTxMs == nil || fb.GapRxMs == nil {
				t.Errorf("failback gaps not measured")
			}
			checkRestored(t, p, res, "dut0", "dut0")
		})
	}
}

// TestDrill8023AD: 802.3ad over 3 slaves against a real LACP partner,
// `--how down` on the slave the drill's own stream is placed on (the
// bond hashes layer3+4): the stream's gap, and when the aggregator
// settled without the slave and, after it came back, with all three
// again, which the kernel's port states must confirm.
func TestDrill8023AD(t *testing.T) {
	p, _ := lacpPair(t, 163, 3)
	StartServe(t, p)
	res, stderr, code := RunDrill(t, p.Bond, "--peer", p.Remote.String(), "--slave", "dut1", "--hold", drillHold.String(), "--yes")
	if code != 0 || res == nil {
		t.Fatalf("drill exit %d: %s", code, stderr)
	}
	logPhases(t, res)
	if res.StreamSlave != "dut1" {
		t.Errorf("the measuring stream was placed on %q, want dut1", res.StreamSlave)
	}
	fo := phaseOf(t, res, "failover")
	fb := phaseOf(t, res, "failback")
	if fo.LACPSettleMs == nil || fb.LACPSettleMs == nil {
		t.Fatalf("LACP settle not measured: failover %.1f ms, failback %.1f ms", msOf(fo.LACPSettleMs), msOf(fb.LACPSettleMs))
	}
	Measure(t, "drill_8023ad_failover_gap_tx[slaves=3]", msOf(fo.GapTxMs), "ms")
	Measure(t, "drill_8023ad_failover_settle[slaves=3]", *fo.LACPSettleMs, "ms")
	Measure(t, "drill_8023ad_failback_settle[slaves=3]", *fb.LACPSettleMs, "ms")
	if fo.GapTxMs == nil || *fo.GapTxMs >= 1000 {
		t.Errorf("failover tx gap %.1f ms for the stream on dut1, want under 1 s", msOf(fo.GapTxMs))
	}
	// The kernel: all three ports collecting and distributing again, in
	// one aggregator.
	agg := -1
	for _, s := range p.Slaves {
		info := p.Root.SlaveInfo(t, s)
		if info.AdActorOperPortState != 63 {
			t.Errorf("%s actor port state %d after the drill, want 63", s, info.AdActorOperPortState)
		}
		if agg == -1 {
			agg = int(info.AggregatorId)
		} else if int(info.AggregatorId) != agg {
			t.Errorf("%s in aggregator %d, the others in %d", s, info.AggregatorId, agg)
		}
	}
	checkRestored(t, p, res, "dut1", "")
}

// TestDrillSafety: a drill killed with SIGKILL during the hold leaves its
// slave down and a state file; `--restore` puts the slave up and the
// active slave back. The last usable slave is refused, and so is a user
// without root; neither touches anything.
func TestDrillSafety(t *testing.T) {
	p := abPair(t, 164, "")
	cmd := exec.Command(bondtopBin, "drill", p.Bond, "--peer", p.Remote.String(), "--hold", "30s", "--yes")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 20*time.Second, "dut0 taken down by the drill", func() (bool, string) {
		return p.Root.Link(t, "dut0").Attrs().RawFlags&syscall.IFF_UP == 0, out.String()
	})
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat("/run/bondtop/drill-" + p.Bond + ".json"); err != nil {
		t.Fatalf("no state file after kill -9: %v", err)
	}
	if a := Sysfs(t, p.Bond, "bonding/active_slave"); a != "dut1" {
		t.Errorf("after kill -9 the active slave is %s, want dut1", a)
	}
	// A new drill refuses while one left state behind.
	if _, stderr, code := RunDrill(t, p.Bond, "--peer", p.Remote.String(), "--yes"); code != 2 || !strings.Contains(stderr, "--restore") {
		t.Errorf("drill over a killed drill's state: exit %d, %s", code, stderr)
	}
	restore := exec.Command(bondtopBin, "drill", p.Bond, "--restore")
	b, err := restore.CombinedOutput()
	t.Logf("bondtop drill --restore: %s", b)
	if err != nil {
		t.Fatalf("--restore: %v", err)
	}
	checkRestored(t, p, &drill.Result{Restored: true}, "dut0", "dut0")

	// ^C during the hold: the drill stops, puts the bond back and says so.
	intr := exec.Command(bondtopBin, "drill", p.Bond, "--peer", p.Remote.String(), "--hold", "30s", "--yes", "--json")
	var intrOut bytes.Buffer
	intr.Stdout, intr.Stderr = &intrOut, &out
	if err := intr.Start(); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 20*time.Second, "dut0 taken down by the drill", func() (bool, string) {
		return p.Root.Link(t, "dut0").Attrs().RawFlags&syscall.IFF_UP == 0, out.String()
	})
	intr.Process.Signal(os.Interrupt)
	intr.Wait()
	var ires drill.Result
	if err := json.Unmarshal(intrOut.Bytes(), &ires); err != nil {
		t.Fatalf("drill after ^C: %v: %s", err, intrOut.String())
	}
	if ires.Interrupted == "" || len(ires.Phases) != 1 {
		t.Errorf("after ^C: interrupted %q, %d phases", ires.Interrupted, len(ires.Phases))
	}
	checkRestored(t, p, &ires, "dut0", "dut0")

	// The last usable slave: dut1's far end down, dut0 is all there is.
	p.Peer.Down(t, "far1")
	Eventually(t, 5*time.Second, "dut1 mii down", func() (bool, string) {
		s := ProcSlave(t, p.Bond, "dut1")["MII Status"]
		return s == "down", s
	})
	_, stderr, code := RunDrill(t, p.Bond, "--peer", p.Remote.String(), "--yes")
	if code != 2 || !strings.Contains(stderr, "last usable slave") {
		t.Errorf("last usable slave: exit %d, %s", code, stderr)
	}
	checkUntouched(t, p)

	// Not root.
	nobody := exec.Command(bondtopBin, "drill", p.Bond, "--peer", p.Remote.String(), "--yes")
	nobody.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	b, err = nobody.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(b), "needs root") {
		t.Errorf("as nobody: %v, %s", err, b)
	}
	checkUntouched(t, p)
}

func checkUntouched(t *testing.T, p *Pair) {
	t.Helper()
	if p.Root.Link(t, "dut0").Attrs().RawFlags&syscall.IFF_UP == 0 {
		t.Errorf("dut0 was taken down")
	}
	if a := Sysfs(t, p.Bond, "bonding/active_slave"); a != "dut0" {
		t.Errorf("active slave %s, want dut0", a)
	}
	if _, err := os.Stat("/run/bondtop/drill-" + p.Bond + ".json"); err == nil {
		t.Errorf("a refused drill wrote a state file")
	}
}

// StartServe runs `bondtop serve` in the peer namespace on the peer's
// address until the end of the test, and waits until it answers.
func StartServe(t testing.TB, p *Pair) {
	t.Helper()
	addr := net.JoinHostPort(p.Remote.String(), "5201")
	cmd := exec.Command(bondtopBin, "serve", "--listen", addr)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Started from a thread inside the namespace, the child lives there.
	if err := p.Peer.Do(cmd.Start); err != nil {
		t.Fatalf("bondtop serve in %s: %v", p.Peer.Name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	Eventually(t, 10*time.Second, "bondtop serve answering on "+addr, func() (bool, string) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, err.Error() + "; serve: " + out.String()
		}
		c.Close()
		return true, ""
	})
}

// RunDrill runs `bondtop drill BOND args...` as a user would, and decodes
// its --json result when it printed one.
func RunDrill(t testing.TB, bond string, args ...string) (*drill.Result, string, int) {
	t.Helper()
	cmd := exec.Command(bondtopBin, append([]string{"drill", bond, "--json"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("bondtop drill: %v", err)
	}
	if stdout.Len() == 0 {
		return nil, stderr.String(), code
	}
	var res drill.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("bondtop drill --json: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	return &res, stderr.String(), code
}
