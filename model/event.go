package model

import "time"

// EventKind names what changed. The values are stable JSON words.
type EventKind string

// The events the Sampler (package collector) finds by comparing one
// reading with the next.
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
