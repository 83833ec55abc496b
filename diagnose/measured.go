package diagnose

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/model"
)

// Findings from the flow meter: the live hash check (does every tx flow
// leave on the slave the hash predicts?) and what the flows arriving on
// each slave say about the switch's hash.

// maxNamed is how many flows a finding names.
const maxNamed = 3

// hashCheck: tx flows measured on another slave than the hash predicts.
// That means our model of the kernel's choice, or our view of the bond,
// is wrong, or the traffic is not what its headers say.
func (v *view) hashCheck() []Finding {
	m := v.now.Measured
	if !m.Metered() || !m.HaveRates() || !v.hashes() || len(v.usable) < 2 || !v.steadySlaves() {
		return nil
	}
	a := m.Agreement
	if a.Disagree() <= 0 {
		return nil
	}
	var named []string
	slaves := map[string]bool{}
	for i := range m.Flows {
		f := &m.Flows[i]
		if !f.Disagrees() || f.Bps <= 0 {
			continue
		}
		slaves[f.Slave] = true
		if len(named) < maxNamed {
			named = append(named, fmt.Sprintf("%s on %s (predicted %s, %s)", flowName(f), f.Slave, f.PredictedSlave(), units.Bits(f.Bps)))
		}
	}
	predictable := a.Flows - a.Unpredictable
	f := Finding{ID: IDHashCheck, Severity: Info, Slaves: v.slaveOrder(slaves)}
	share := 1.0
	if a.BytesAgreeShare != nil {
		share = *a.BytesAgreeShare
	}
	if share < 0.95 {
		f.Severity = Warning
	}
	f.Message = fmt.Sprintf("hash check: %d of %d tx flows left on another slave than %s predicts (%s of the bytes agree)", a.Disagree(), predictable, v.policy(), pct(share))
	var d strings.Builder
	fmt.Fprintf(&d, "The flow meter saw these flows leave on a slave the transmit hash (%s %s over %s) does not pick: %s.", v.mode(), v.policy(), strings.Join(v.usable, "/"), strings.Join(named, "; "))
	if a.Disagree() > len(named) {
		fmt.Fprintf(&d, " %d more in the flows view (f).", a.Disagree()-len(named))
	}
	d.WriteString(" Either the bond is not what bondtop read (a slave in another aggregator, a policy changed at this instant), or the kernel decides by something the headers do not show: encap3+4 with a socket or RSS hash, a VLAN or tunnel header the meter saw differently, or a tc or XDP program that redirects packets to a slave. Compare with `bondtop hash` for one of these flows, and report it if the bond's settings are as shown.")
	f.Detail = d.String()
	return []Finding{f}
}

// steadySlaves reports whether the usable slaves were the same in the
// previous sample: a failover within the interval moves flows between
// slaves, which is no disagreement.
func (v *view) steadySlaves() bool {
	if len(v.win.samples) < 2 {
		return true
	}
	return slices.Equal(v.win.prevUsable, v.usable)
}

// flowName is a flow's ends as ss prints them.
func flowName(f *model.MeasuredFlow) string {
	if !f.Src.IsValid() {
		return fmt.Sprintf("%s %s -> %s", f.ProtoName(), model.MAC(f.SrcMAC), model.MAC(f.DstMAC))
	}
	return fmt.Sprintf("%s %s -> %s", f.ProtoName(), netip.AddrPortFrom(f.Src, f.SrcPort), netip.AddrPortFrom(f.Dst, f.DstPort))
}

// rxGroup is the flows arriving from one source MAC.
type rxGroup struct {
	mac     [6]byte
	bps     float64
	slaves  map[string]float64
	onSlave map[string]int // flows per slave
	// What differs between the group's flows: destination MACs (VMs
	// behind a bridge), address pairs, ports.
	dstMACs map[[6]byte]bool
	addrs   map[[2]netip.Addr]bool
	ports   map[[2]uint16]bool
}

// switchHash: received traffic piles onto one slave, and the flows the
// meter saw arrive show how the switch hashes: all flows of one source
// MAC on one slave, though their destinations, addresses or ports differ.
func (v *view) switchHash() []Finding {
	m := v.now.Measured
	if !m.Metered() || !m.HaveRates() || len(v.usable) < 2 {
		return nil
	}
	switch v.mode() {
	case bonding.Mode8023AD, bonding.ModeXOR:
	default:
		return nil // the switch balances only a port channel
	}
	groups := map[[6]byte]*rxGroup{}
	perSlave := map[string]float64{}
	total := 0.0
	for i := range m.Flows {
		f := &m.Flows[i]
		// Multicast and broadcast frames are flooded or hashed apart
		// from the partner's unicast: they say nothing of its hash.
		if f.IsTx() || f.Bps <= 0 || f.DstMAC[0]&1 != 0 {
			continue
		}
		g := groups[f.SrcMAC]
		if g == nil {
			g = &rxGroup{mac: f.SrcMAC, slaves: map[string]float64{}, onSlave: map[string]int{}, dstMACs: map[[6]byte]bool{},
				addrs: map[[2]netip.Addr]bool{}, ports: map[[2]uint16]bool{}}
			groups[f.SrcMAC] = g
		}
		g.bps += f.Bps
		g.slaves[f.Slave] += f.Bps
		g.onSlave[f.Slave]++
		g.dstMACs[f.DstMAC] = true
		g.addrs[[2]netip.Addr{f.Src, f.Dst}] = true
		g.ports[[2]uint16{f.SrcPort, f.DstPort}] = true
		perSlave[f.Slave] += f.Bps
		total += f.Bps
	}
	if total < 1e6 {
		return nil // a trickle (LACPDUs, ARP) says nothing
	}
	busiest := ""
	for _, s := range v.usable {
		if busiest == "" || perSlave[s] > perSlave[busiest] {
			busiest = s
		}
	}
	share := perSlave[busiest] / total
	if share < max(0.5, 1/float64(len(v.usable))+0.25) {
		return nil
	}
	// The heaviest source on the busiest slave, and whether its flows,
	// different as they are, all arrive there.
	var top *rxGroup
	for _, g := range groups {
		if g.slaves[busiest] > 0 && (top == nil || g.bps > top.bps || g.bps == top.bps && string(g.mac[:]) < string(top.mac[:])) {
			top = g
		}
	}
	// Nearly all of that source's traffic on the one slave (a stray
	// frame elsewhere, such as an ARP reply, does not change the verdict).
	if top == nil || top.onSlave[busiest] < 2 || top.slaves[busiest] < 0.95*top.bps {
		return nil
	}
	var by, differ string
	switch {
	case len(top.dstMACs) > 1:
		by, differ = "source MAC alone", fmt.Sprintf("to %d different destination MACs", len(top.dstMACs))
	case len(top.addrs) > 1:
		by, differ = "MAC addresses", fmt.Sprintf("between %d different address pairs", len(top.addrs))
	case len(top.ports) > 1:
		by, differ = "addresses, not ports", fmt.Sprintf("between the same two hosts on %d different port pairs", len(top.ports))
	default:
		return nil
	}
	f := Finding{ID: IDSwitchHash, Severity: Warning, Slaves: []string{busiest}}
	f.Message = fmt.Sprintf("rx: %d flows from %s (%s of received traffic) all arrive on %s: the switch hashes by %s", top.onSlave[busiest], model.MAC(top.mac), pct(top.bps/total), busiest, by)
	var d strings.Builder
	fmt.Fprintf(&d, "The switch (the link partner) picks the slave for every frame it sends to this host, and the flow meter saw %d flows from %s arrive, %s, all on %s (%s), while %s carries %s of what arrives.",
		top.onSlave[busiest], model.MAC(top.mac), differ, busiest, units.Bits(top.slaves[busiest]), busiest, pct(share))
	d.WriteString(" Frames from one router or gateway all carry its MAC as source, so a switch that hashes by MAC sends everything routed to this host down one link.")
	d.WriteString(" To change, on the switch's port channel: hash by addresses and ports (Cisco IOS: port-channel load-balance src-dst-mixed-ip-port; NX-OS: port-channel load-balance src-dst ip-l4port; Juniper: forwarding-options hash-key family inet layer-3 layer-4; Arista: port-channel load-balance trident fields ip/l4; a Linux bond as partner: xmit_hash_policy layer3+4). The bond on this host cannot change it.")
	f.Detail = d.String()
	return []Finding{f}
}
