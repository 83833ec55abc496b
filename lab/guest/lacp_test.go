//go:build linux

package guest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// lacpPair builds the 802.3ad scenario: bond0 (root) and pbond0 (peer),
// both layer3+4 with lacp_rate fast, n veth pairs between them, and waits
// until every port on both sides is in state 63 (activity, short timeout,
// aggregation, synchronization, collecting, distributing). It returns the
// pair and the time negotiation took.
func lacpPair(t *testing.T, subnet, n int) (*Pair, time.Duration) {
	return lacpPairSpec(t, subnet, n, BondSpec{Mode: "802.3ad", XmitHashPolicy: "layer3+4", LACPRate: "fast"})
}

// lacpPairSpec is lacpPair with the bonds' options given (802.3ad mode).
func lacpPairSpec(t *testing.T, subnet, n int, spec BondSpec) (*Pair, time.Duration) {
	p := NewPair(t, subnet, n)
	p.Peer.Bond(t, "pbond0", spec, p.Far...)
	start := time.Now()
	p.Root.Bond(t, p.Bond, spec, p.Slaves...)
	p.Root.Addr(t, p.Bond, p.LocalCIDR())
	p.Peer.Addr(t, "pbond0", p.RemoteCIDR())
	waitLACP(t, p)
	return p, time.Since(start)
}

// waitLACP waits until LACP is negotiated: every port, on both sides, sees
// itself and its partner in state 63.
func waitLACP(t *testing.T, p *Pair) {
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
}

// TestLACP: 802.3ad against a real LACP partner (a second bond), with 2
// and 4 slaves: the kernel's facts first, then bondtop against them, then
// bondtop's per-slave rates against the kernel's counters under traffic.
func TestLACP(t *testing.T) {
	for i, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("slaves=%d", n), func(t *testing.T) {
			p, took := lacpPair(t, 10+i, n)
			Measure(t, fmt.Sprintf("lacp_negotiation[slaves=%d]", n), took.Seconds(), "s")

			// The kernel's view.
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
				proc := ProcSlave(t, p.Bond, s)
				if got := proc["partner system mac address"]; got != peerMAC {
					t.Errorf("%s partner MAC (proc) %s, want %s", s, got, peerMAC)
				}
				if got := p.Peer.SlaveInfo(t, p.Far[i]).AdPartnerOperPortState; got != 63 {
					t.Errorf("%s (peer) partner port state %d, want 63", p.Far[i], got)
				}
			}
			Capture(t, p.Bond)

			// bondtop's view of the same.
			bt := NewBondtop(t, time.Second, p.Bond)
			b := BondIn(t, bt.Sample(t), p.Bond)
			if !Is(b.Mode, bonding.Mode8023AD) || !Is(b.XmitHashPolicy, "layer3+4") {
				t.Errorf("bondtop: mode %s, policy %s", Show(b.Mode), Show(b.XmitHashPolicy))
			}
			if l := b.LACP; l == nil {
				t.Fatal("bondtop: no LACP section")
			} else {
				if !Is(l.Rate, "fast") {
					t.Errorf("bondtop: lacp rate %s, want fast", Show(l.Rate))
				}
				if !Is(l.AggregatorID, agg) || !Is(l.NumPorts, n) {
					t.Errorf("bondtop: aggregator %s with %s ports, kernel %d with %d", Show(l.AggregatorID), Show(l.NumPorts), agg, n)
				}
				if !Is(l.ActorKey, actorKey) || !Is(l.PartnerKey, partnerKey) {
					t.Errorf("bondtop: keys %s/%s, kernel %d/%d", Show(l.ActorKey), Show(l.PartnerKey), actorKey, partnerKey)
				}
				if !Is(l.PartnerMAC, peerMAC) {
					t.Errorf("bondtop: partner MAC %s, kernel %s", Show(l.PartnerMAC), peerMAC)
				}
				if mac := p.Root.MAC(t, p.Bond); !Is(l.SystemMAC, mac) {
					t.Errorf("bondtop: system MAC %s, bond's %s", Show(l.SystemMAC), mac)
				}
			}
			if len(b.Slaves) != n {
				t.Fatalf("bondtop: %d slaves, want %d", len(b.Slaves), n)
			}
			for i, s := range b.Slaves {
				if s.Name != p.Slaves[i] {
					t.Errorf("bondtop: slave %d is %s, want %s (enslave order)", i, s.Name, p.Slaves[i])
				}
				if !Is(s.AggregatorID, agg) {
					t.Errorf("bondtop: %s aggregator %s, want %d", s.Name, Show(s.AggregatorID), agg)
				}
				if s.Actor == nil || !Is(s.Actor.PortState, 63) || s.Partner == nil || !Is(s.Partner.PortState, 63) {
					t.Errorf("bondtop: %s port states actor %+v partner %+v, want 63/63", s.Name, s.Actor, s.Partner)
				}
				if s.Partner == nil || !Is(s.Partner.SystemMAC, peerMAC) {
					t.Errorf("bondtop: %s partner MAC wrong, want %s", s.Name, peerMAC)
				}
				if !Is(s.SpeedMbps, 10000) || !Is(s.Duplex, "full") {
					t.Errorf("bondtop: %s speed %s duplex %s, veth says 10000 full", s.Name, Show(s.SpeedMbps), Show(s.Duplex))
				}
			}

			start := time.Now()
			for range 5 {
				bt.Sample(t)
			}
			Measure(t, fmt.Sprintf("bondtop_sample_time[slaves=%d]", n), float64(time.Since(start).Microseconds())/5000, "ms")

			_, worst, _ := RateCheck(t, bt, p, 2*n, 41000, 3*time.Second)
			Measure(t, fmt.Sprintf("rate_error[802.3ad,slaves=%d]", n), worst, "%")
		})
	}
}

// TestLACPUnpartnered: one slave's far end is not in the partner bond (the
// cable in the wrong switch port). It must end in an aggregator of its own,
// defaulted, with an all-zero partner MAC, while the others carry on; and
// bondtop, watching the running bond, must say so.
func TestLACPUnpartnered(t *testing.T) {
	p, _ := lacpPair(t, 20, 2)
	bt := NewBondtop(t, 200*time.Millisecond, p.Bond)
	w := bt.Watch(t)
	time.Sleep(300 * time.Millisecond)

	// A third pair whose far end stays a plain interface.
	p.Root.Veth(t, "dut2", p.Peer, "far2")
	p.Root.Enslave(t, p.Bond, "dut2")
	agg := SysfsInt(t, p.Bond, "bonding/ad_aggregator")
	Eventually(t, 30*time.Second, "dut2 defaulted", func() (bool, string) {
		st, ok := SysfsNum(t, "dut2", "bonding_slave/ad_actor_oper_port_state")
		return ok && st&int(bonding.StateDefaulted) != 0, fmt.Sprintf("actor state %d", st)
	})
	own := SysfsInt(t, "dut2", "bonding_slave/ad_aggregator_id")
	if own == agg {
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
	actor := SysfsInt(t, "dut2", "bonding_slave/ad_actor_oper_port_state")
	t.Logf("kernel: dut2 actor state %d, partner state %d, aggregator %d (active %d)",
		actor, SysfsInt(t, "dut2", "bonding_slave/ad_partner_oper_port_state"), own, agg)

	// bondtop: the slave appeared, and a later snapshot shows it alone and
	// defaulted, like the kernel.
	w.WaitEvent(t, 5*time.Second, "slave_added dut2", func(e model.Event) bool {
		return e.Kind == model.EventSlaveAdded && e.Slave == "dut2"
	})
	time.Sleep(500 * time.Millisecond) // port states are polled, not notified
	w.Stop()
	Capture(t, p.Bond)
	snaps := w.Snapshots()
	b := BondIn(t, snaps[len(snaps)-1], p.Bond)
	s := SlaveIn(t, b, "dut2")
	if !Is(s.AggregatorID, own) {
		t.Errorf("bondtop: dut2 aggregator %s, kernel %d", Show(s.AggregatorID), own)
	}
	if s.Actor == nil || s.Actor.PortState == nil || !s.Actor.PortState.Has(bonding.StateDefaulted) {
		t.Errorf("bondtop: dut2 actor state not defaulted: %+v", s.Actor)
	}
	if s.Partner == nil || !Is(s.Partner.SystemMAC, "00:00:00:00:00:00") {
		t.Errorf("bondtop: dut2 partner MAC not zeros: %+v", s.Partner)
	}
	if b.LACP == nil || !Is(b.LACP.AggregatorID, agg) || !Is(b.LACP.NumPorts, 2) {
		t.Errorf("bondtop: active aggregator %+v, kernel %d with 2 ports", b.LACP, agg)
	}
	var kinds []string
	for _, e := range w.Events() {
		if e.Slave == "dut2" {
			kinds = append(kinds, string(e.Kind))
		}
	}
	t.Logf("bondtop events:%s", FormatEvents(w.Events()))
	if !strings.Contains(strings.Join(kinds, " "), string(model.EventSlaveAdded)) {
		t.Errorf("bondtop: no slave_added for dut2 (events for it: %v)", kinds)
	}
}
