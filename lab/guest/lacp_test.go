//go:build linux

package guest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// lacpPair builds the 802.3ad scenario: bond0 (root) and pbond0 (peer),
// both layer3+4 with lacp_rate fast, n veth pairs between them, and waits
// until every port on both sides is in state 63 (activity, short timeout,
// aggregation, synchronization, collecting, distributing). It returns the
// pair and the time negotiation took.
func lacpPair(t *testing.T, subnet, n int) (*Pair, time.Duration) {
	p := NewPair(t, subnet, n)
	spec := BondSpec{Mode: "802.3ad", XmitHashPolicy: "layer3+4", LACPRate: "fast"}
	p.Peer.Bond(t, "pbond0", spec, p.Far...)
	start := time.Now()
	p.Root.Bond(t, p.Bond, spec, p.Slaves...)
	p.Root.Addr(t, p.Bond, p.LocalCIDR())
	p.Peer.Addr(t, "pbond0", p.RemoteCIDR())
	// Negotiated when every port, on both sides, sees itself and its
	// partner in state 63.
	Eventually(t, 60*time.Second, "LACP negotiated (port states 63 on both sides)", func() (bool, string) {
		var seen []string
		ok := true
		for i := range p.Slaves {
			a, _ := SysfsNum(t, p.Slaves[i], "bonding_slave/ad_actor_oper_port_state")
			ap, _ := SysfsNum(t, p.Slaves[i], "bonding_slave/ad_partner_oper_port_state")
			far := p.Peer.SlaveInfo(t, p.Far[i])
			b, bp := int(far.AdActorOperPortState), int(far.AdPartnerOperPortState)
			seen = append(seen, fmt.Sprintf("%s=%d/%d %s=%d/%d", p.Slaves[i], a, ap, p.Far[i], b, bp))
			ok = ok && a == 63 && ap == 63 && b == 63 && bp == 63
		}
		return ok, strings.Join(seen, ", ")
	})
	return p, time.Since(start)
}

// TestLACP: 802.3ad against a real LACP partner (a second bond), with 2
// and 4 slaves.
func TestLACP(t *testing.T) {
	for i, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("slaves=%d", n), func(t *testing.T) {
			p, took := lacpPair(t, 10+i, n)
			Measure(t, fmt.Sprintf("lacp_negotiation[slaves=%d]", n), took.Seconds(), "s")

			peerMAC := p.Peer.MAC(t, "pbond0")
			if got := Sysfs(t, p.Bond, "bonding/ad_partner_mac"); got != peerMAC {
				t.Errorf("bond partner MAC %s, want the peer bond's %s", got, peerMAC)
			}
			if got := SysfsInt(t, p.Bond, "bonding/ad_num_ports"); got != n {
				t.Errorf("ad_num_ports %d, want %d", got, n)
			}
			actorKey, partnerKey := SysfsInt(t, p.Bond, "bonding/ad_actor_key"), SysfsInt(t, p.Bond, "bonding/ad_partner_key")
			// Both sides are 10G full-duplex veths: same key.
			if actorKey == 0 || actorKey != partnerKey {
				t.Errorf("actor key %d, partner key %d: want equal, non-zero", actorKey, partnerKey)
			}
			if got := Sysfs(t, p.Bond, "bonding/lacp_rate"); got != "fast 1" {
				t.Errorf("lacp_rate %q, want fast 1", got)
			}
			agg := SysfsInt(t, p.Bond, "bonding/ad_aggregator")
			for i, s := range p.Slaves {
				if got := SysfsInt(t, s, "bonding_slave/ad_aggregator_id"); got != agg {
					t.Errorf("%s in aggregator %d, want the active %d", s, got, agg)
				}
				if got := SysfsInt(t, s, "bonding_slave/ad_partner_oper_port_state"); got != 63 {
					t.Errorf("%s partner port state %d, want 63", s, got)
				}
				proc := ProcSlave(t, p.Bond, s)
				if got := proc["partner system mac address"]; got != peerMAC {
					t.Errorf("%s partner MAC (proc) %s, want %s", s, got, peerMAC)
				}
				if got := p.Peer.SlaveInfo(t, p.Far[i]).AdPartnerOperPortState; got != 63 {
					t.Errorf("%s (peer) partner port state %d, want 63", p.Far[i], got)
				}
			}
		})
	}
}

// TestLACPUnpartnered: one slave's far end is not in the partner bond (the
// cable in the wrong switch port). It must end in an aggregator of its own,
// defaulted, with an all-zero partner MAC, while the others carry on.
func TestLACPUnpartnered(t *testing.T) {
	p, _ := lacpPair(t, 20, 2)
	// A third pair whose far end stays a plain interface.
	p.Root.Veth(t, "dut2", p.Peer, "far2")
	p.Root.Enslave(t, p.Bond, "dut2")
	agg := SysfsInt(t, p.Bond, "bonding/ad_aggregator")
	Eventually(t, 30*time.Second, "dut2 defaulted", func() (bool, string) {
		st, ok := SysfsNum(t, "dut2", "bonding_slave/ad_actor_oper_port_state")
		return ok && st&0x40 != 0, fmt.Sprintf("actor state %d", st)
	})
	if got := SysfsInt(t, "dut2", "bonding_slave/ad_aggregator_id"); got == agg {
		t.Errorf("dut2 in the active aggregator %d, want one of its own", agg)
	}
	if got := SysfsInt(t, p.Bond, "bonding/ad_aggregator"); got != agg {
		t.Errorf("active aggregator changed from %d to %d", agg, got)
	}
	if got := SysfsInt(t, p.Bond, "bonding/ad_num_ports"); got != 2 {
		t.Errorf("active aggregator has %d ports, want 2", got)
	}
	proc := ProcSlave(t, p.Bond, "dut2")
	if got := proc["partner system mac address"]; got != "00:00:00:00:00:00" {
		t.Errorf("dut2 partner MAC %s, want zeros", got)
	}
	t.Logf("dut2: actor state %d, partner state %d, aggregator %d (active %d)",
		SysfsInt(t, "dut2", "bonding_slave/ad_actor_oper_port_state"),
		SysfsInt(t, "dut2", "bonding_slave/ad_partner_oper_port_state"),
		SysfsInt(t, "dut2", "bonding_slave/ad_aggregator_id"), agg)
}
