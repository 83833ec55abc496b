package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// Finding IDs of the switch's side of the cables.
const (
	IDNotMLAG            = "switch-not-mlag"
	IDSwitchLAG          = "switch-lag-mismatch"
	IDSwitchFrameSize    = "switch-frame-size"
	IDSwitchVLAN         = "switch-vlan-mismatch"
	IDLACPDUSilent       = "lacpdu-silent"
	IDLACPDUBad          = "lacpdu-bad"
	IDCarrierUnseen      = "carrier-flaps-unseen"
	IDInactiveSlaveDrops = "inactive-slave-drops"
	IDNoNeighbors        = "switch-no-neighbors"
	IDPartnerView        = "lacp-partner-view"
	IDFirmwareLLDP       = "nic-firmware-lldp"
)

// ethernetOverhead is what a frame adds to the MTU: the Ethernet header
// (14) and the FCS (4); an 802.1Q tag adds 4 more.
const ethernetOverhead = 18

// switchSide: what the switch says about itself (LLDP/CDP) against what
// the bond needs, the LACP conversation's health, and carrier flaps.
func (v *view) switchSide() []Finding {
	var out []Finding
	for _, f := range []func() []Finding{v.notMLAG, v.switchLAG, v.switchFrameSize, v.switchVLAN, v.lacpduHealth, v.partnerView, v.carrierUnseen, v.inactiveDrops, v.noNeighbors, v.firmwareLLDP} {
		out = append(out, f()...)
	}
	return out
}

// neighborOf is a slave's neighbour, nil when none was heard.
func neighborOf(s *model.SlaveSample) *model.SwitchSide {
	if s.SwitchSide == nil || s.Neighbor == nil {
		return nil
	}
	return s.SwitchSide
}

func neighborName(s *model.SlaveSample) string {
	n := s.Neighbor
	name := n.ChassisID
	if n.SystemName != nil && *n.SystemName != "" {
		name = *n.SystemName
	}
	return name + " " + n.PortID
}

// notMLAG: slaves of one 802.3ad bond plugged into different switches
// (different chassis) that also answer LACP with different system MACs:
// the two switches do not act as one (no MLAG/vPC), so the bond cannot
// aggregate the slaves and uses only one switch's ports.
func (v *view) notMLAG() []Finding {
	b := v.now
	if !b.Is8023AD() {
		return nil
	}
	chassis := map[string][]string{} // chassis id -> slaves
	partner := map[string]string{}   // slave -> partner system MAC
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if neighborOf(s) == nil || s.Partner == nil || s.Partner.SystemMAC == nil || *s.Partner.SystemMAC == zeroMAC {
			continue
		}
		chassis[s.Neighbor.ChassisID] = append(chassis[s.Neighbor.ChassisID], s.Name)
		partner[s.Name] = *s.Partner.SystemMAC
	}
	if len(chassis) < 2 {
		return nil
	}
	macs := map[string]bool{}
	for _, m := range partner {
		macs[m] = true
	}
	if len(macs) < 2 {
		return nil // different switches, one LACP system: an MLAG pair
	}
	set := boolSet(partner)
	names := v.slaveOrder(set)
	var parts []string
	for _, n := range names {
		s := slaveOf(b, n)
		parts = append(parts, fmt.Sprintf("%s → %s (LACP partner %s)", n, neighborName(s), partner[n]))
	}
	return []Finding{{ID: IDNotMLAG, Severity: Critical, Slaves: names,
		Message: "slaves on different switches that are not an MLAG pair: " + strings.Join(parts, "; "),
		Detail: "LLDP shows the slaves plugged into different switches, and LACP shows a different partner system on each, so the bond puts them in separate aggregators and carries traffic on one switch's ports only. " +
			"Either configure the two switches as one MLAG/vPC/stack domain (they then answer LACP with one system MAC), or move the cables into ports of one switch's port-channel."}}
}

// switchLAG: the switch port's link aggregation TLV against the mode.
func (v *view) switchLAG() []Finding {
	b := v.now
	var wrong map[string]bool
	var msg, detail string
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if neighborOf(s) == nil || s.Neighbor.Aggregation == nil {
			continue
		}
		agg := s.Neighbor.Aggregation
		switch {
		case b.Is8023AD() && !agg.Enabled:
			msg = "the switch says these ports are in no link aggregation while the bond runs 802.3ad"
			detail = "The switch's LLDP link aggregation TLV says aggregation is not enabled on the port: LACP cannot form an aggregate with it, and the slave ends alone or defaulted. Put the switch ports in an LACP port-channel (channel-group N mode active)."
		case str(b.Mode) == bonding.ModeXOR && agg.Enabled:
			msg = "the switch has these ports in a link aggregation while the bond is static balance-xor"
			detail = "The switch port is aggregated (its LLDP link aggregation TLV says so). If the switch runs LACP there, a static bond never answers it and the switch may keep the ports suspended; use mode 802.3ad, or make the switch's port-channel static (mode on)."
		default:
			continue
		}
		if wrong == nil {
			wrong = map[string]bool{}
		}
		wrong[s.Name] = true
	}
	if wrong == nil {
		return nil
	}
	names := v.slaveOrder(wrong)
	return []Finding{{ID: IDSwitchLAG, Severity: Warning, Slaves: names,
		Message: msg + ": " + strings.Join(names, ", "), Detail: detail}}
}

// switchFrameSize: the switch port's maximum frame size below what the
// bond's MTU needs.
func (v *view) switchFrameSize() []Finding {
	b := v.now
	if b.MTU == nil {
		return nil
	}
	need := *b.MTU + ethernetOverhead
	small := map[string]bool{}
	var parts []string
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if neighborOf(s) == nil || s.Neighbor.MaxFrameSize == nil || *s.Neighbor.MaxFrameSize >= need {
			continue
		}
		small[s.Name] = true
		parts = append(parts, fmt.Sprintf("%s → %s max frame %d", s.Name, neighborName(s), *s.Neighbor.MaxFrameSize))
	}
	if len(small) == 0 {
		return nil
	}
	return []Finding{{ID: IDSwitchFrameSize, Severity: Critical, Slaves: v.slaveOrder(small),
		Message: fmt.Sprintf("bond MTU %d needs %d-byte frames (%d tagged), the switch takes fewer: %s", *b.MTU, need, need+4, strings.Join(parts, "; ")),
		Detail:  "Frames larger than the switch port's maximum frame size are dropped there, silently: small packets pass, full-size ones (bulk TCP, NFS, storage) stall. Raise the switch port's MTU (system jumbomtu / mtu 9216) or lower the bond's to match."}}
}

// switchVLAN: the port VLAN (untagged VLAN) differs between slaves.
func (v *view) switchVLAN() []Finding {
	b := v.now
	by := map[int][]string{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if neighborOf(s) != nil && s.Neighbor.PortVLANID != nil {
			by[*s.Neighbor.PortVLANID] = append(by[*s.Neighbor.PortVLANID], s.Name)
		}
	}
	if len(by) < 2 {
		return nil
	}
	var ids []int
	for id := range by {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var parts []string
	all := map[string]bool{}
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf("VLAN %d on %s", id, strings.Join(by[id], ", ")))
		for _, n := range by[id] {
			all[n] = true
		}
	}
	return []Finding{{ID: IDSwitchVLAN, Severity: Warning, Slaves: v.slaveOrder(all),
		Message: "the switch ports of one bond have different port VLANs: " + strings.Join(parts, "; "),
		Detail:  "Untagged frames land in a different VLAN depending on the slave the hash (or a failover) picks: some flows or ARP replies vanish. Configure the switch ports (and the port-channel) identically."}}
}

// lacpduHealth: a partner that stopped sending LACPDUs, and illegal or
// unknown PDUs rising.
func (v *view) lacpduHealth() []Finding {
	b := v.now
	if !b.Is8023AD() {
		return nil
	}
	var out []Finding
	silent := map[string]bool{}
	var parts []string
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if s.SwitchSide == nil || s.LACPDU == nil || str(s.MIIStatus) != "up" {
			continue
		}
		// The partner sends at the rate our actor asks for: every second
		// with lacp_rate fast (short timeout), every 30 s with slow.
		interval := 30.0
		if s.Actor != nil && s.Actor.PortState != nil && s.Actor.PortState.Has(bonding.StateShortTimeout) ||
			b.LACP != nil && str(b.LACP.Rate) == "fast" {
			interval = 1
		}
		if s.LACPDU.SilentSeconds > 3*interval {
			silent[s.Name] = true
			parts = append(parts, fmt.Sprintf("%s %.0f s", s.Name, s.LACPDU.SilentSeconds))
		}
	}
	if len(silent) > 0 {
		out = append(out, Finding{ID: IDLACPDUSilent, Severity: Critical, Slaves: v.slaveOrder(silent),
			Message: "no LACPDU from the partner for more than three intervals: " + strings.Join(parts, ", "),
			Detail:  "The switch stopped answering LACP on these ports (its LACP process, the port-channel's configuration, or a one-way link). The bond will expire the partner and take the slave out of the aggregate. Check show lacp neighbor / show port-channel on the switch, and that LACP frames are not filtered (a firmware LLDP/DCB agent, a tap)."})
	}
	bad := map[string]uint64{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		p := v.win.firstSlave(s.Name)
		if s.SwitchSide == nil || s.LACPDU == nil || p == nil || !p.badLACPDUs.ok {
			continue
		}
		now := s.LACPDU.IllegalRx + s.LACPDU.UnknownRx
		was := p.badLACPDUs.v
		if now > was {
			bad[s.Name] = now - was
		}
	}
	if len(bad) > 0 {
		names := v.slaveOrder(boolSet(bad))
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s +%d", n, bad[n]))
		}
		out = append(out, Finding{ID: IDLACPDUBad, Severity: Warning, Slaves: names,
			Message: fmt.Sprintf("illegal or unknown LACPDUs%s: %s", v.sinceText(), strings.Join(parts, ", ")),
			Detail:  "The bond received slow-protocol frames it could not use: a partner speaking another LACP version, a corrupting link, or something else on the wire sending 0x8809 frames. ip -d -s link xstats type bond_slave dev SLAVE shows the counters."})
	}
	return out
}

// carrierUnseen: the carrier went down between two MII polls, so the
// bond never noticed (MII up, no link failure counted) while frames were
// lost.
func (v *view) carrierUnseen() []Finding {
	b := v.now
	flaps := map[string]uint64{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		p := v.win.firstSlave(s.Name)
		if s.SwitchSide == nil || s.Carrier == nil || p == nil || !p.carrierDowns.ok || str(s.MIIStatus) != "up" {
			continue
		}
		if s.Carrier.Down <= p.carrierDowns.v {
			continue
		}
		down := s.Carrier.Down - p.carrierDowns.v
		failures := uint64(0)
		if s.LinkFailureCount != nil && p.linkFailures.ok && *s.LinkFailureCount > p.linkFailures.v {
			failures = uint64(*s.LinkFailureCount - p.linkFailures.v)
		}
		if down > failures {
			flaps[s.Name] = down - failures
		}
	}
	if len(flaps) == 0 {
		return nil
	}
	names := v.slaveOrder(boolSet(flaps))
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d", n, flaps[n]))
	}
	miimon := "miimon"
	if b.MIIMonMs != nil {
		miimon = fmt.Sprintf("miimon (%d ms)", *b.MIIMonMs)
	}
	return []Finding{{ID: IDCarrierUnseen, Severity: Warning, Slaves: names,
		Message: fmt.Sprintf("carrier lost and back between two MII polls%s: %s", v.sinceText(), strings.Join(parts, ", ")),
		Detail:  "The carrier down count rose while the slave's MII status stayed up: the link dropped for less than " + miimon + " and the bond never failed over, but frames in flight were lost. Suspect the cable or optic (ethtool -m SLAVE for light levels), or the switch port; a shorter miimon makes the bond notice."}}
}

// inactiveDrops explains drops on backup slaves: the bond discards what
// arrives on a slave it does not use (counted as rx_nohandler on current
// kernels, rx_dropped on older ones), by design.
func (v *view) inactiveDrops() []Finding {
	b := v.now
	set := map[string]bool{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if c := v.win.counts[s.Name]; c != nil && c.rxDrops > 0 && str(s.State) == "backup" {
			set[s.Name] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	names := v.slaveOrder(set)
	return []Finding{{ID: IDInactiveSlaveDrops, Severity: Info, Slaves: names,
		Message: "receive drops on backup slaves " + strings.Join(names, ", ") + ": by design",
		Detail:  "A backup slave still receives broadcasts, multicasts and floods from the switch; the bond discards them (rx_dropped on older kernels, rx_nohandler on current ones). That is not a fault, and no action is needed."}}
}

// noNeighbors: the bond listens and no slave hears a neighbour after a
// full LLDP interval (30 s by default).
func (v *view) noNeighbors() []Finding {
	b := v.now
	if len(b.Slaves) == 0 || b.NeighborsWhy != nil || v.windowSeconds() < 31 {
		return nil
	}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if s.SwitchSide == nil || s.Neighbor != nil {
			return nil
		}
	}
	return []Finding{{ID: IDNoNeighbors, Severity: Info, Slaves: []string{},
		Message: "no slave of " + b.Name + " hears LLDP or CDP",
		Detail:  "The switch does not send LLDP/CDP on these ports (lldp run / lldp transmit on the switch), or a NIC's firmware agent consumes the frames before the host sees them (Intel: ethtool --set-priv-flags SLAVE disable-fw-lldp on)."}}
}

// sinceText is " in the last N s" over the analyzer's window, or nothing
// when the window is under a second (two quick samples).
func (v *view) sinceText() string {
	if secs := v.windowSeconds(); secs >= 1 {
		return fmt.Sprintf(" in the last %.0f s", secs)
	}
	return ""
}

// partnerView: the partner's LACPDUs carry its view of our port; where it
// differs from our actor, the partner hears someone else or nobody.
func (v *view) partnerView() []Finding {
	b := v.now
	if !b.Is8023AD() {
		return nil
	}
	wrong := map[string]bool{}
	var parts []string
	deaf := false
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if s.SwitchSide == nil || s.LACPDU == nil || s.LACPDU.PartnerView == nil || s.Actor == nil {
			continue
		}
		pv, a := s.LACPDU.PartnerView, s.Actor
		var diff []string
		if pv.SystemMAC == zeroMAC {
			deaf = true
			diff = append(diff, "it has heard nothing from us")
		} else {
			if a.SystemMAC != nil && !strings.EqualFold(pv.SystemMAC, *a.SystemMAC) {
				diff = append(diff, fmt.Sprintf("system %s, ours %s", pv.SystemMAC, *a.SystemMAC))
			}
			if a.Key != nil && pv.Key != *a.Key {
				diff = append(diff, fmt.Sprintf("key %d, ours %d", pv.Key, *a.Key))
			}
			if a.PortNumber != nil && pv.Port != *a.PortNumber {
				diff = append(diff, fmt.Sprintf("port %d, ours %d", pv.Port, *a.PortNumber))
			}
		}
		if len(diff) > 0 {
			wrong[s.Name] = true
			parts = append(parts, s.Name+": "+strings.Join(diff, ", "))
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	detail := "The partner's LACPDUs describe the port it believes is at the other end. A different system or port means the cable goes somewhere else than the switch thinks (a patch panel mix-up, a media converter, a second host), or our LACPDUs reach another device."
	if deaf {
		detail = "The partner sends LACPDUs but has not heard ours: the link works in one direction only (a broken fibre strand, a transceiver that does not transmit), or our LACPDUs are filtered on the way. Check the optic's tx/rx light levels (ethtool -m) and the switch's LACP counters."
	}
	return []Finding{{ID: IDPartnerView, Severity: Warning, Slaves: v.slaveOrder(wrong),
		Message: "the LACP partner's view of our port differs from our actor — " + strings.Join(parts, "; "),
		Detail:  detail}}
}

// firmwareLLDP: slaves that hear no neighbour while their NIC's firmware
// runs its own LLDP agent, which takes the switch's frames for itself.
func (v *view) firmwareLLDP() []Finding {
	b := v.now
	set := map[string]bool{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if s.SwitchSide != nil && s.Neighbor == nil && s.FirmwareLLDPAgent != nil && *s.FirmwareLLDPAgent {
			set[s.Name] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	names := v.slaveOrder(set)
	return []Finding{{ID: IDFirmwareLLDP, Severity: Info, Slaves: names,
		Message: "the NIC firmware's LLDP agent consumes the switch's LLDP on " + strings.Join(names, ", "),
		Detail:  "The NIC answers LLDP (and DCBX) itself, so the host hears no neighbour on these ports. To see the switch here (and let lldpd or bondtop hear it): ethtool --set-priv-flags " + names[0] + " disable-fw-lldp on (i40e), or fw-lldp-agent off (ice)."}}
}
