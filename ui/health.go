package ui

import (
	"fmt"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/format"
)

// severity orders findings: bad ones are listed first.
type severity int

const (
	sevWarn severity = iota
	sevBad
)

// finding is one thing on screen worth the admin's attention, in words.
type finding struct {
	sev   severity
	slave string // "" for the bond as a whole
	text  string
}

// findings looks at one bond the way an admin would on first sight: links
// down, LACP not negotiated or negotiated with the wrong partner, slaves
// outside the active aggregator, errors. Deeper analysis (hash balance) is
// the diagnose package's; these are what the panels highlight.
func findings(b *model.BondSample) []finding {
	var out []finding
	add := func(sev severity, slave, format string, args ...any) {
		out = append(out, finding{sev, slave, fmt.Sprintf(format, args...)})
	}
	if st := format.Deref(b.MIIStatus); st != "" && st != "up" {
		add(sevBad, "", "bond MII status %s", st)
	}
	if len(b.Slaves) == 0 {
		add(sevBad, "", "no slaves enslaved")
	}
	lacp := b.Is8023AD() && b.LACP != nil
	if lacp && b.LACP.NoActiveAggregator {
		add(sevBad, "", "no active aggregator: the bond carries nothing")
	}
	partner := expectedPartner(b)
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if st := format.Deref(s.MIIStatus); st != "" && st != "up" {
			add(sevBad, s.Name, "%s link %s", s.Name, st)
		}
		if s.Interval.Any() {
			add(sevWarn, s.Name, "%s errors/drops/overruns in the interval", s.Name)
		}
		if s.SwitchSide != nil && s.Neighbor != nil {
			if why := neighborTrouble(b, s); why != "" {
				add(sevBad, s.Name, "%s switch port %s: %s", s.Name, neighborLabel(s.Neighbor), why)
			}
		}
		if !lacp {
			continue
		}
		if agg := b.LACP.AggregatorID; agg != nil && s.AggregatorID != nil && *s.AggregatorID != *agg {
			add(sevBad, s.Name, "%s is in aggregator %d, not the active %d: it carries nothing", s.Name, *s.AggregatorID, *agg)
		}
		if s.Partner != nil {
			mac := format.Deref(s.Partner.SystemMAC)
			switch {
			case mac == zeroMAC:
				add(sevBad, s.Name, "%s hears no LACP partner (partner MAC all zero): is LACP on at the switch port?", s.Name)
			case mac != "" && partner != "" && mac != partner:
				add(sevBad, s.Name, "%s sees partner %s, the bond %s: cabled to another switch?", s.Name, mac, partner)
			}
		}
		if s.Actor != nil && s.Actor.PortState != nil && !s.Actor.PortState.Healthy() {
			add(sevBad, s.Name, "%s actor port %s", s.Name, stateProblems(*s.Actor.PortState))
		}
		if s.Partner != nil && s.Partner.PortState != nil && !s.Partner.PortState.Healthy() {
			add(sevBad, s.Name, "%s partner port %s", s.Name, stateProblems(*s.Partner.PortState))
		}
		if format.Deref(s.ActorChurnState) == "churned" || format.Deref(s.PartnerChurnState) == "churned" {
			add(sevBad, s.Name, "%s LACP churned (actor %s, partner %s)", s.Name, format.OrDash(s.ActorChurnState), format.OrDash(s.PartnerChurnState))
		}
	}
	if format.Deref(b.Mode) == bonding.ModeActiveBackup {
		active := format.Deref(b.ActiveSlave)
		if active == "" && len(b.Slaves) > 0 {
			add(sevBad, "", "no active slave")
		}
		if p := format.Deref(b.Primary); p != "" && active != "" && p != active {
			add(sevWarn, "", "active slave %s is not the primary %s", active, p)
		}
	}
	// Bad first; within a severity, the order found (bond, then enslave order).
	bad := make([]finding, 0, len(out))
	var warn []finding
	for _, f := range out {
		if f.sev == sevBad {
			bad = append(bad, f)
		} else {
			warn = append(warn, f)
		}
	}
	return append(bad, warn...)
}

// expectedPartner is the LACP partner the bond negotiated with: the active
// aggregator's partner, or else the MAC most slaves hear. "" when unknown.
func expectedPartner(b *model.BondSample) string {
	if b.LACP != nil {
		if mac := format.Deref(b.LACP.PartnerMAC); mac != "" && mac != zeroMAC {
			return mac
		}
	}
	votes := map[string]int{}
	best := ""
	for i := range b.Slaves {
		if p := b.Slaves[i].Partner; p != nil {
			mac := format.Deref(p.SystemMAC)
			if mac == "" || mac == zeroMAC {
				continue
			}
			votes[mac]++
			if votes[mac] > votes[best] {
				best = mac
			}
		}
	}
	return best
}

// stateProblems names what keeps a port state from healthy: "missing
// sync, collecting; defaulted".
func stateProblems(ps bonding.PortState) string {
	var missing, alarms []string
	for _, want := range []struct {
		bit  bonding.PortState
		name string
	}{
		{bonding.StateActivity, "activity"}, {bonding.StateAggregation, "aggregation"},
		{bonding.StateSynchronization, "sync"}, {bonding.StateCollecting, "collecting"},
		{bonding.StateDistributing, "distributing"},
	} {
		if !ps.Has(want.bit) {
			missing = append(missing, want.name)
		}
	}
	if ps.Has(bonding.StateDefaulted) {
		alarms = append(alarms, "defaulted")
	}
	if ps.Has(bonding.StateExpired) {
		alarms = append(alarms, "expired")
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+strings.Join(missing, ", "))
	}
	return strings.Join(append(parts, alarms...), "; ")
}
