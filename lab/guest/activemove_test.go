//go:build linux

package guest

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// TestActiveSlaveMoveChatter: why the drill moves active_slave through
// sysfs. With IPv6 on an active-backup bond (num_grat_arp 0, num_unsol_na
// 0, resend_igmp 0), a move by netlink (RTM_NEWLINK with the bond's
// IFLA_BOND_ACTIVE_SLAVE, as `ip link set bond0 type bond active_slave`)
// sends MLD reports by the new active slave at once: the kernel's "device
// changed" notification, on which IPv6 resends them. They teach a switch
// the new port as a gratuitous ARP would. A move through sysfs sends
// nothing.
func TestActiveSlaveMoveChatter(t *testing.T) {
	p := NewPair(t, 165, 2)
	p.Root.Bond(t, p.Bond, BondSpec{Mode: "active-backup", MIIMon: 50}, p.Slaves...)
	p.Root.Addr(t, p.Bond, p.LocalCIDR())
	PeerBridge(t, p, 10*time.Second)
	for _, o := range []string{"num_grat_arp", "num_unsol_na", "resend_igmp"} {
		SetBondOption(t, p.Bond, o, "0")
	}
	Eventually(t, 10*time.Second, "dut0 active", func() (bool, string) {
		a := Sysfs(t, p.Bond, "bonding/active_slave")
		return a == "dut0", a
	})
	if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+p.Bond+"/router_solicitations", []byte("0"), 0); err != nil {
		t.Fatal(err)
	}
	mac := p.Root.Link(t, p.Bond).Attrs().HardwareAddr
	far1 := ListenMAC(t, p.Peer, "far1", mac)
	far0 := ListenMAC(t, p.Peer, "far0", mac)
	far0.WaitQuiet(t, 2*time.Second, 20*time.Second)
	far1.WaitQuiet(t, 2*time.Second, 20*time.Second)

	// sysfs: dut1 active, nothing leaves by it.
	t0 := time.Now()
	SetBondOption(t, p.Bond, "active_slave", "dut1")
	time.Sleep(time.Second)
	sysfs := far1.Between(t0, time.Now())
	t.Logf("after a move through sysfs, frames from the bond on far1: %q", sysfs)
	if len(sysfs) != 0 {
		t.Errorf("a move through sysfs sent %q", sysfs)
	}
	// Back to dut0 the same way; then the same move by netlink.
	SetBondOption(t, p.Bond, "active_slave", "dut0")
	far0.WaitQuiet(t, time.Second, 10*time.Second)
	t0 = time.Now()
	moveByNetlink(t, p, "dut1")
	time.Sleep(time.Second)
	netlinkFrames := far1.Between(t0, time.Now())
	t.Logf("after a move by netlink, frames from the bond on far1: %q", netlinkFrames)
	mld := 0
	for _, f := range netlinkFrames {
		if strings.HasSuffix(f, "(MLD)") {
			mld++
		}
	}
	if mld == 0 {
		t.Errorf("a move by netlink sent no MLD report: %q (the drill's reason for sysfs is gone: see docs/drill.md)", netlinkFrames)
	}
	Measure(t, "active_move_mld_reports[netlink]", float64(mld), "")
}

func moveByNetlink(t *testing.T, p *Pair, slave string) {
	t.Helper()
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(p.Root.Link(t, p.Bond).Attrs().Index)
	req.AddData(msg)
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("bond"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	data.AddRtAttr(nl.IFLA_BOND_ACTIVE_SLAVE, nl.Uint32Attr(uint32(p.Root.Link(t, slave).Attrs().Index)))
	req.AddData(info)
	if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
		t.Fatalf("active_slave %s by netlink: %v", slave, err)
	}
	if a := Sysfs(t, p.Bond, "bonding/active_slave"); a != slave {
		t.Fatalf("active slave %s after the netlink move to %s", a, slave)
	}
}
