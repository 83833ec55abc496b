package collector

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// EventKind names what changed. The values are stable JSON words.
type EventKind string

// The events the collector finds by comparing one reading with the next.
const (
	EventBondAppeared   EventKind = "bond_appeared"
	EventBondGone       EventKind = "bond_gone"
	EventSlaveAdded     EventKind = "slave_added"
	EventSlaveRemoved   EventKind = "slave_removed"
	EventLinkUp         EventKind = "link_up"
	EventLinkDown       EventKind = "link_down"
	EventFailover       EventKind = "failover"
	EventAggregator     EventKind = "aggregator_changed"
	EventPartnerMAC     EventKind = "partner_mac_changed"
	EventPortState      EventKind = "port_state_changed"
	EventChurn          EventKind = "churn"
	EventLinkFailure    EventKind = "link_failure"
	EventSlaveState     EventKind = "slave_state_changed"
	EventBondMIIChanged EventKind = "bond_mii_changed"
	// EventBondMAC: the bond's MAC address changed (a network manager
	// restarted and derived it again); found when the Sampler re-reads
	// the running settings (every few seconds).
	EventBondMAC EventKind = "bond_mac_changed"
	// EventLACPSystem: the LACP system MAC the bond sends changed; the
	// switch sees a new partner and renegotiates every port.
	EventLACPSystem EventKind = "lacp_system_changed"
	// EventMemberEnabled and EventMemberDisabled: Open vSwitch started or
	// stopped sending on a bond member (bond/show's enabled/disabled).
	EventMemberEnabled  EventKind = "member_enabled"
	EventMemberDisabled EventKind = "member_disabled"
)

// Event is one change between two readings. Old and New hold the values
// in the kernel's words ("" when absent).
type Event struct {
	Time    time.Time `json:"time"`
	Bond    string    `json:"bond"`
	Slave   string    `json:"slave,omitempty"`
	Kind    EventKind `json:"kind"`
	Old     string    `json:"old,omitempty"`
	New     string    `json:"new,omitempty"`
	Message string    `json:"message"`
}

// appendBondDiff appends to evs the events that turn prev into cur, in a
// stable order: bond-level first, then slaves in enslave order. Nothing is
// allocated when nothing changed: numbers are compared before they are
// written out.
func appendBondDiff(evs []Event, at time.Time, prev, cur *bonding.Bond) []Event {
	add := func(slave string, kind EventKind, old, new, msg string) {
		evs = append(evs, Event{Time: at, Bond: cur.Name, Slave: slave, Kind: kind, Old: old, New: new, Message: msg})
	}
	name := cur.Name

	if o, n := str(prev.MIIStatus), str(cur.MIIStatus); o != n && o != "" && n != "" {
		add("", EventBondMIIChanged, o, n, fmt.Sprintf("%s MII status %s -> %s", name, o, n))
	}
	if o, n := str(prev.ActiveSlave), str(cur.ActiveSlave); o != n {
		add("", EventFailover, o, n, fmt.Sprintf("%s failover: active slave %s -> %s", name, orNone(o), orNone(n)))
	}
	if prev.LACP != nil && cur.LACP != nil {
		if changed(prev.LACP.AggregatorID, cur.LACP.AggregatorID) {
			o, n := num(prev.LACP.AggregatorID), num(cur.LACP.AggregatorID)
			add("", EventAggregator, o, n, fmt.Sprintf("%s active aggregator %s -> %s", name, o, n))
		}
		if o, n := str(prev.LACP.PartnerMAC), str(cur.LACP.PartnerMAC); o != n && o != "" && n != "" {
			add("", EventPartnerMAC, o, n, fmt.Sprintf("%s LACP partner %s -> %s", name, o, n))
		}
		if o, n := str(prev.LACP.SystemMAC), str(cur.LACP.SystemMAC); o != n && o != "" && n != "" {
			add("", EventLACPSystem, o, n, fmt.Sprintf("%s LACP system MAC %s -> %s", name, o, n))
		}
	}

	for i := range prev.Slaves {
		if cur.Slave(prev.Slaves[i].Name) == nil {
			s := prev.Slaves[i].Name
			add(s, EventSlaveRemoved, "", "", fmt.Sprintf("%s released from %s", s, name))
		}
	}
	for i := range cur.Slaves {
		c := &cur.Slaves[i]
		p := prev.Slave(c.Name)
		if p == nil {
			add(c.Name, EventSlaveAdded, "", "", fmt.Sprintf("%s enslaved to %s", c.Name, name))
			continue
		}
		evs = appendSlaveDiff(evs, at, name, p, c)
	}
	return evs
}

func appendSlaveDiff(evs []Event, at time.Time, bond string, p, c *bonding.Slave) []Event {
	add := func(kind EventKind, old, new, msg string) {
		evs = append(evs, Event{Time: at, Bond: bond, Slave: c.Name, Kind: kind, Old: old, New: new, Message: msg})
	}
	if o, n := str(p.MIIStatus), str(c.MIIStatus); o != n && o != "" && n != "" {
		kind := EventLinkDown
		if n == "up" {
			kind = EventLinkUp
		}
		add(kind, o, n, fmt.Sprintf("%s link %s -> %s", c.Name, o, n))
	}
	if p.OVS != nil && c.OVS != nil && p.OVS.Enabled != c.OVS.Enabled {
		kind, o, n := EventMemberDisabled, "enabled", "disabled"
		if c.OVS.Enabled {
			kind, o, n = EventMemberEnabled, "disabled", "enabled"
		}
		add(kind, o, n, fmt.Sprintf("%s member %s -> %s", c.Name, o, n))
	}
	if o, n := str(p.State), str(c.State); o != n && o != "" && n != "" {
		add(EventSlaveState, o, n, fmt.Sprintf("%s %s -> %s", c.Name, o, n))
	}
	if changed(p.LinkFailureCount, c.LinkFailureCount) && *c.LinkFailureCount > *p.LinkFailureCount {
		o, n := num(p.LinkFailureCount), num(c.LinkFailureCount)
		add(EventLinkFailure, o, n, fmt.Sprintf("%s link failure count %s -> %s", c.Name, o, n))
	}
	if changed(p.AggregatorID, c.AggregatorID) {
		o, n := num(p.AggregatorID), num(c.AggregatorID)
		add(EventAggregator, o, n, fmt.Sprintf("%s aggregator %s -> %s", c.Name, o, n))
	}
	if p.Partner != nil && c.Partner != nil {
		if o, n := str(p.Partner.SystemMAC), str(c.Partner.SystemMAC); o != n && o != "" && n != "" {
			add(EventPartnerMAC, o, n, fmt.Sprintf("%s LACP partner %s -> %s", c.Name, o, n))
		}
	}
	if p.Actor != nil && c.Actor != nil {
		if changed(p.Actor.PortState, c.Actor.PortState) {
			o, n := state(p.Actor.PortState), state(c.Actor.PortState)
			add(EventPortState, o, n, fmt.Sprintf("%s actor port state %s -> %s", c.Name, o, n))
		}
	}
	if p.Partner != nil && c.Partner != nil {
		if changed(p.Partner.PortState, c.Partner.PortState) {
			o, n := state(p.Partner.PortState), state(c.Partner.PortState)
			add(EventPortState, o, n, fmt.Sprintf("%s partner port state %s -> %s", c.Name, o, n))
		}
	}
	churned := func(st *string, was *string, cnt, wasCnt *int) bool {
		if st != nil && *st == "churned" && (was == nil || *was != "churned") {
			return true
		}
		return cnt != nil && wasCnt != nil && *cnt > *wasCnt
	}
	if churned(c.ActorChurnState, p.ActorChurnState, c.ActorChurnedCount, p.ActorChurnedCount) {
		add(EventChurn, str(p.ActorChurnState), str(c.ActorChurnState), fmt.Sprintf("%s actor churned (count %s)", c.Name, num(c.ActorChurnedCount)))
	}
	if churned(c.PartnerChurnState, p.PartnerChurnState, c.PartnerChurnedCount, p.PartnerChurnedCount) {
		add(EventChurn, str(p.PartnerChurnState), str(c.PartnerChurnState), fmt.Sprintf("%s partner churned (count %s)", c.Name, num(c.PartnerChurnedCount)))
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
