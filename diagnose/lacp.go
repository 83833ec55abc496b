package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

const zeroMAC = "00:00:00:00:00:00"

// lacp: 802.3ad negotiation trouble, from the bond's and each slave's
// LACP state. Fields a reader without CAP_NET_ADMIN cannot see are nil and
// judged by nothing.
func (v *view) lacp() []Finding {
	b := v.now
	if !b.Is8023AD() || b.LACP == nil {
		return nil
	}
	l := b.LACP
	var out []Finding
	if l.NoActiveAggregator {
		return []Finding{{ID: IDNoAggregator, Severity: Critical, Slaves: []string{},
			Message: "no active aggregator: the bond sends nothing",
			Detail:  "The bond has no aggregator selected, so it drops every packet it is given. Usually no slave has link, or none negotiated LACP with the switch: check the links and that the switch ports are in an LACP port-channel (mode active), then cat /proc/net/bonding/" + b.Name + "."}}
	}
	up := map[string]bool{}
	for i := range b.Slaves {
		if str(b.Slaves[i].MIIStatus) == "up" {
			up[b.Slaves[i].Name] = true
		}
	}

	// Slaves outside the active aggregator carry nothing.
	outside := map[string]bool{}
	var why []string
	if agg := l.AggregatorID; agg != nil {
		for i := range b.Slaves {
			s := &b.Slaves[i]
			if s.AggregatorID != nil && *s.AggregatorID != *agg && up[s.Name] {
				outside[s.Name] = true
				why = append(why, fmt.Sprintf("%s (aggregator %d)", s.Name, *s.AggregatorID))
			}
		}
	}
	if len(outside) > 0 {
		names := v.slaveOrder(outside)
		sev := Warning
		if len(v.usable) <= 1 {
			sev = Critical
		}
		out = append(out, Finding{ID: IDAggregator, Severity: sev, Slaves: names,
			Message: fmt.Sprintf("%s outside the active aggregator %d: link up, carrying nothing", strings.Join(why, ", "), *l.AggregatorID),
			Detail:  "A slave joins the active aggregator only when its LACP partner (the switch's system MAC and key) and its own key (speed and duplex) match the others'. A slave in another aggregator was connected to another switch or another port-channel, runs at another speed, or hears no LACPDUs (see the defaulted and partner findings). ad_select (" + str(l.ADSelect) + ") picks which aggregator is active. Fix the switch side (same port-channel, LACP active) or the speed; the slave joins by itself."})
	} else if l.NumPorts != nil && *l.NumPorts < len(up) {
		out = append(out, Finding{ID: IDNumPorts, Severity: Warning, Slaves: []string{},
			Message: fmt.Sprintf("the active aggregator has %d ports, %d slaves have link", *l.NumPorts, len(up)),
			Detail:  "Slaves with link are missing from the active aggregator, so they carry nothing. The slaves' aggregator ids (root only) tell which; usually the switch ports are not all in the same LACP port-channel."})
	}

	// Partners: none heard, or different ones. The slaves are grouped by
	// partner only when they hear more than one: one partner, the healthy
	// case judged every second, costs no allocation.
	missing := map[string]bool{}
	partnerOf := func(s *model.SlaveSample) (string, bool) {
		if !up[s.Name] || s.Partner == nil || s.Partner.SystemMAC == nil {
			return "", false
		}
		mac := strings.ToLower(*s.Partner.SystemMAC)
		return mac, mac != zeroMAC
	}
	onePartner, first := true, ""
	for i := range b.Slaves {
		s := &b.Slaves[i]
		mac, ok := partnerOf(s)
		switch {
		case !ok && mac == zeroMAC:
			missing[s.Name] = true
		case !ok:
		case first == "":
			first = mac
		case mac != first:
			onePartner = false
		}
	}
	var partners map[string][]string // partner MAC -> slaves
	if !onePartner {
		partners = map[string][]string{}
		for i := range b.Slaves {
			if mac, ok := partnerOf(&b.Slaves[i]); ok {
				partners[mac] = append(partners[mac], b.Slaves[i].Name)
			}
		}
	}
	if len(missing) > 0 {
		out = append(out, Finding{ID: IDPartnerMissing, Severity: Warning, Slaves: v.slaveOrder(missing),
			Message: fmt.Sprintf("no LACP partner on %s (partner MAC %s)", strings.Join(v.slaveOrder(missing), ", "), zeroMAC),
			Detail:  "No LACPDU was heard on these slaves: the switch port is not in an LACP port-channel (static or access port), LACP is passive on both ends, or the LACPDUs are lost (a media converter, a VM switch that eats slow-protocol frames). Configure the switch ports as one port-channel with LACP active."})
	}
	if len(partners) > 1 {
		macs := make([]string, 0, len(partners))
		for m := range partners {
			macs = append(macs, m)
		}
		sort.Strings(macs)
		var parts []string
		all := map[string]bool{}
		for _, m := range macs {
			parts = append(parts, strings.Join(partners[m], ",")+" -> "+m)
			for _, s := range partners[m] {
				all[s] = true
			}
		}
		out = append(out, Finding{ID: IDPartnerDiffers, Severity: Warning, Slaves: v.slaveOrder(all),
			Message: "slaves hear different LACP partners: " + strings.Join(parts, "; "),
			Detail:  "An aggregator needs one partner system. Slaves cabled to two switches that are not one logical switch (stack, MLAG/vPC with a shared system id) end in separate aggregators, and only one is active. Cable all slaves to the same switch or stack, or configure the MLAG pair to present one system MAC."})
	}

	// Port-state bits.
	defaulted, expired := map[string]bool{}, map[string]bool{}
	fastHere, fastThere := map[string]bool{}, map[string]bool{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if !up[s.Name] || s.Actor == nil || s.Actor.PortState == nil {
			continue
		}
		a := *s.Actor.PortState
		if a.Has(bonding.StateDefaulted) {
			defaulted[s.Name] = true
		}
		if a.Has(bonding.StateExpired) {
			expired[s.Name] = true
		}
		if s.Partner != nil && s.Partner.PortState != nil && !missing[s.Name] && !a.Has(bonding.StateDefaulted) {
			p := *s.Partner.PortState
			if a.Has(bonding.StateShortTimeout) != p.Has(bonding.StateShortTimeout) {
				if a.Has(bonding.StateShortTimeout) {
					fastHere[s.Name] = true
				} else {
					fastThere[s.Name] = true
				}
			}
		}
	}
	if len(defaulted) > 0 {
		names := v.slaveOrder(defaulted)
		out = append(out, Finding{ID: IDDefaulted, Severity: Warning, Slaves: names,
			Message: "LACP defaulted on " + strings.Join(names, ", ") + ": no LACPDUs from the partner",
			Detail:  "The defaulted bit means the port gave up waiting for the partner's LACPDUs and uses default partner values: it cannot join the partner's aggregator. The switch port lost its LACP configuration, was moved out of the port-channel, or the partner stopped sending. Check the switch's port-channel and its LACP counters for this port."})
	}
	if len(expired) > 0 {
		names := v.slaveOrder(expired)
		out = append(out, Finding{ID: IDExpired, Severity: Warning, Slaves: names,
			Message: "LACP expired on " + strings.Join(names, ", ") + ": the partner's LACPDUs stopped",
			Detail:  "The expired bit means the partner's last LACPDU timed out (3 s with lacp_rate fast, 90 s with slow); the port defaults next. A flapping link, an overloaded switch CPU, or a partner reconfiguring."})
	}
	if len(fastHere)+len(fastThere) > 0 {
		names := map[string]bool{}
		for n := range fastHere {
			names[n] = true
		}
		for n := range fastThere {
			names[n] = true
		}
		here := "fast here, slow on the switch"
		if len(fastHere) == 0 {
			here = "slow here, fast on the switch"
		}
		out = append(out, Finding{ID: IDTimeoutMismatch, Severity: Info, Slaves: v.slaveOrder(names),
			Message: "LACP timeout differs on " + strings.Join(v.slaveOrder(names), ", ") + ": " + here,
			Detail:  "Each side asks the other for LACPDUs every second (fast, short timeout) or every 30 s (slow). It works either way, but the side that asked for slow ones notices a dead partner only after 90 s. Set the same rate on both: lacp_rate on the bond, lacp rate fast on the switch port."})
	}

	// Churn: now, or counted during the window.
	churned := map[string]bool{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if str(s.ActorChurnState) == "churned" || str(s.PartnerChurnState) == "churned" {
			churned[s.Name] = true
			continue
		}
		if p := v.win.firstSlave(s.Name); p != nil {
			if p.actorChurned.rose(s.ActorChurnedCount) || p.partnerChurned.rose(s.PartnerChurnedCount) {
				churned[s.Name] = true
			}
		}
	}
	if len(churned) > 0 {
		names := v.slaveOrder(churned)
		out = append(out, Finding{ID: IDChurned, Severity: Warning, Slaves: names,
			Message: "LACP churned on " + strings.Join(names, ", "),
			Detail:  "Churn means the actor or the partner could not reach synchronization in time (60 s): the two ends disagree on the aggregation (a port of another port-channel, keys that differ) or LACPDUs go missing. The churn counters count each episode."})
	}

	// Keys: the partner's oper keys, and our own (which encode speed and
	// duplex), should agree over the slaves with link.
	if f, ok := v.keyMismatch(up, missing); ok {
		out = append(out, f)
	}
	return out
}

func (v *view) keyMismatch(up, missing map[string]bool) (Finding, bool) {
	b := v.now
	actorKey := func(s *model.SlaveSample) (int, bool) {
		if !up[s.Name] || s.Actor == nil || s.Actor.Key == nil {
			return 0, false
		}
		return *s.Actor.Key, true
	}
	partnerKey := func(s *model.SlaveSample) (int, bool) {
		if !up[s.Name] || missing[s.Name] || s.Partner == nil || s.Partner.Key == nil || *s.Partner.Key == 0 {
			return 0, false
		}
		return *s.Partner.Key, true
	}
	// Equal keys, the healthy case judged every second, are told without
	// building the groups (and allocating).
	if !keysDiffer(b, actorKey) && !keysDiffer(b, partnerKey) {
		return Finding{}, false
	}
	actor, partner := map[int][]string{}, map[int][]string{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if k, ok := actorKey(s); ok {
			actor[k] = append(actor[k], s.Name)
		}
		if k, ok := partnerKey(s); ok {
			partner[k] = append(partner[k], s.Name)
		}
	}
	all := map[string]bool{}
	var parts []string
	describe := func(side string, keys map[int][]string) {
		if len(keys) <= 1 {
			return
		}
		ks := make([]int, 0, len(keys))
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Ints(ks)
		for _, k := range ks {
			parts = append(parts, fmt.Sprintf("%s key %d on %s", side, k, strings.Join(keys[k], ",")))
			for _, s := range keys[k] {
				all[s] = true
			}
		}
	}
	describe("our", actor)
	describe("partner", partner)
	return Finding{ID: IDKeyMismatch, Severity: Warning, Slaves: v.slaveOrder(all),
		Message: "LACP keys differ between slaves: " + strings.Join(parts, "; "),
		Detail:  "Ports aggregate only with equal keys. Our key encodes each slave's speed and duplex (a slave at another speed gets another key and its own aggregator); the partner's key is its port-channel (ports in different port-channels on the switch). Make the speeds equal, and put the switch ports in one port-channel."}, true
}

// keysDiffer reports whether the slaves with a key (ok) have more than one.
func keysDiffer(b *model.BondSample, key func(*model.SlaveSample) (int, bool)) bool {
	first, seen := 0, false
	for i := range b.Slaves {
		k, ok := key(&b.Slaves[i])
		switch {
		case !ok:
		case !seen:
			first, seen = k, true
		case k != first:
			return true
		}
	}
	return false
}
