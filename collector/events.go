package collector

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// appendBondDiff appends to evs the events that turn prev into cur, in a
// stable order: bond-level first, then slaves in enslave order. Nothing is
// allocated when nothing changed: numbers are compared before they are
// written out.
func appendBondDiff(evs []model.Event, at time.Time, prev, cur *bonding.Bond) []model.Event {
	add := func(slave string, kind model.EventKind, old, new, msg string) {
		evs = append(evs, model.Event{Time: at, Bond: cur.Name, Slave: slave, Kind: kind, Old: old, New: new, Message: msg})
	}
	name := cur.Name

	if o, n := str(prev.MIIStatus), str(cur.MIIStatus); o != n && o != "" && n != "" {
		add("", model.EventBondMIIChanged, o, n, fmt.Sprintf("%s MII status %s -> %s", name, o, n))
	}
	if o, n := str(prev.ActiveSlave), str(cur.ActiveSlave); o != n {
		add("", model.EventFailover, o, n, fmt.Sprintf("%s failover: active slave %s -> %s", name, orNone(o), orNone(n)))
	}
	if prev.LACP != nil && cur.LACP != nil {
		if changed(prev.LACP.AggregatorID, cur.LACP.AggregatorID) {
			o, n := num(prev.LACP.AggregatorID), num(cur.LACP.AggregatorID)
			add("", model.EventAggregator, o, n, fmt.Sprintf("%s active aggregator %s -> %s", name, o, n))
		}
		if o, n := str(prev.LACP.PartnerMAC), str(cur.LACP.PartnerMAC); o != n && o != "" && n != "" {
			add("", model.EventPartnerMAC, o, n, fmt.Sprintf("%s LACP partner %s -> %s", name, o, n))
		}
		if o, n := str(prev.LACP.SystemMAC), str(cur.LACP.SystemMAC); o != n && o != "" && n != "" {
			add("", model.EventLACPSystem, o, n, fmt.Sprintf("%s LACP system MAC %s -> %s", name, o, n))
		}
	}

	for i := range prev.Slaves {
		if cur.Slave(prev.Slaves[i].Name) == nil {
			s := prev.Slaves[i].Name
			add(s, model.EventSlaveRemoved, "", "", fmt.Sprintf("%s released from %s", s, name))
		}
	}
	for i := range cur.Slaves {
		c := &cur.Slaves[i]
		p := prev.Slave(c.Name)
		if p == nil {
			add(c.Name, model.EventSlaveAdded, "", "", fmt.Sprintf("%s enslaved to %s", c.Name, name))
			continue
		}
		evs = appendSlaveDiff(evs, at, name, p, c)
	}
	return evs
}

func appendSlaveDiff(evs []model.Event, at time.Time, bond string, p, c *bonding.Slave) []model.Event {
	add := func(kind model.EventKind, old, new, msg string) {
		evs = append(evs, model.Event{Time: at, Bond: bond, Slave: c.Name, Kind: kind, Old: old, New: new, Message: msg})
	}
	if o, n := str(p.MIIStatus), str(c.MIIStatus); o != n && o != "" && n != "" {
		kind := model.EventLinkDown
		if n == "up" {
			kind = model.EventLinkUp
		}
		add(kind, o, n, fmt.Sprintf("%s link %s -> %s", c.Name, o, n))
	}
	if p.OVS != nil && c.OVS != nil && p.OVS.Enabled != c.OVS.Enabled {
		kind, o, n := model.EventMemberDisabled, "enabled", "disabled"
		if c.OVS.Enabled {
			kind, o, n = model.EventMemberEnabled, "disabled", "enabled"
		}
		add(kind, o, n, fmt.Sprintf("%s member %s -> %s", c.Name, o, n))
	}
	if o, n := str(p.State), str(c.State); o != n && o != "" && n != "" {
		add(model.EventSlaveState, o, n, fmt.Sprintf("%s %s -> %s", c.Name, o, n))
	}
	if changed(p.LinkFailureCount, c.LinkFailureCount) && *c.LinkFailureCount > *p.LinkFailureCount {
		o, n := num(p.LinkFailureCount), num(c.LinkFailureCount)
		add(model.EventLinkFailure, o, n, fmt.Sprintf("%s link failure count %s -> %s", c.Name, o, n))
	}
	if changed(p.AggregatorID, c.AggregatorID) {
		o, n := num(p.AggregatorID), num(c.AggregatorID)
		add(model.EventAggregator, o, n, fmt.Sprintf("%s aggregator %s -> %s", c.Name, o, n))
	}
	if p.Partner != nil && c.Partner != nil {
		if o, n := str(p.Partner.SystemMAC), str(c.Partner.SystemMAC); o != n && o != "" && n != "" {
			add(model.EventPartnerMAC, o, n, fmt.Sprintf("%s LACP partner %s -> %s", c.Name, o, n))
		}
	}
	if p.Actor != nil && c.Actor != nil {
		if changed(p.Actor.PortState, c.Actor.PortState) {
			o, n := state(p.Actor.PortState), state(c.Actor.PortState)
			add(model.EventPortState, o, n, fmt.Sprintf("%s actor port state %s -> %s", c.Name, o, n))
		}
	}
	if p.Partner != nil && c.Partner != nil {
		if changed(p.Partner.PortState, c.Partner.PortState) {
			o, n := state(p.Partner.PortState), state(c.Partner.PortState)
			add(model.EventPortState, o, n, fmt.Sprintf("%s partner port state %s -> %s", c.Name, o, n))
		}
	}
	churned := func(st *string, was *string, cnt, wasCnt *int) bool {
		if st != nil && *st == "churned" && (was == nil || *was != "churned") {
			return true
		}
		return cnt != nil && wasCnt != nil && *cnt > *wasCnt
	}
	if churned(c.ActorChurnState, p.ActorChurnState, c.ActorChurnedCount, p.ActorChurnedCount) {
		add(model.EventChurn, str(p.ActorChurnState), str(c.ActorChurnState), fmt.Sprintf("%s actor churned (count %s)", c.Name, num(c.ActorChurnedCount)))
	}
	if churned(c.PartnerChurnState, p.PartnerChurnState, c.PartnerChurnedCount, p.PartnerChurnedCount) {
		add(model.EventChurn, str(p.PartnerChurnState), str(c.PartnerChurnState), fmt.Sprintf("%s partner churned (count %s)", c.Name, num(c.PartnerChurnedCount)))
	}
	return evs
}

// changed reports whether both values are known and differ.
func changed[T comparable](old, new *T) bool {
	return old != nil && new != nil && *old != *new
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func num(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

// state writes a port state as the kernel prints it: its decimal value.
func state(p *bonding.PortState) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(int(*p))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
