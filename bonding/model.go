package bonding

import (
	"encoding/json"
	"strings"
)

// Bond is one bonding master as the kernel describes it. Pointer fields are
// nil when no source gave the value (an old kernel, a reader without
// CAP_NET_ADMIN, an unreadable file).
type Bond struct {
	Name string `json:"name"`
	// Kind is KindLinux or KindOVS; empty means a Linux bond (readers
	// that predate Open vSwitch support, --root trees, old recordings).
	Kind string `json:"kind,omitempty"`
	// Bridge is the Open vSwitch bridge of an OVS bond, nil otherwise.
	Bridge *string `json:"bridge,omitempty"`
	// OVS holds what only Open vSwitch has (ovs.go); nil for Linux bonds.
	OVS *OVSBond `json:"ovs,omitempty"`
	// Mode is the kernel's own word: balance-rr, active-backup,
	// balance-xor, broadcast, 802.3ad, balance-tlb, balance-alb.
	Mode           *string `json:"mode"`
	XmitHashPolicy *string `json:"xmit_hash_policy"`
	MIIStatus      *string `json:"mii_status"`
	MIIMonMs       *int    `json:"miimon_ms"`
	UpDelayMs      *int    `json:"updelay_ms"`
	DownDelayMs    *int    `json:"downdelay_ms"`
	PeerNotifyMs   *int    `json:"peer_notif_delay_ms"`
	ARPIntervalMs  *int    `json:"arp_interval_ms"`
	// ARPTargets are the ARP monitor's IPv4 targets, in the kernel's order.
	ARPTargets      []string `json:"arp_ip_targets,omitempty"`
	Primary         *string  `json:"primary"`
	PrimaryReselect *string  `json:"primary_reselect"`
	ActiveSlave     *string  `json:"active_slave"`
	FailOverMAC     *string  `json:"fail_over_mac"`
	TLBDynamicLB    *int     `json:"tlb_dynamic_lb"`
	MTU             *int     `json:"mtu"`
	OperState       *string  `json:"operstate"`
	// DriverVersion is the text after "Ethernet Channel Bonding Driver: v";
	// it does not tell which lines the kernel prints (RHEL says 3.7.1).
	DriverVersion *string `json:"driver_version"`
	// LACP is nil outside 802.3ad.
	LACP   *LACP   `json:"lacp"`
	Slaves []Slave `json:"slaves"`
	// Counters are the bond's own interface counters. They are not the sum
	// of its slaves': the kernel folds only deltas seen while enslaved.
	Counters Counters `json:"-"`
}

// LACP is the bond-wide 802.3ad state. The system priority and MAC need
// CAP_NET_ADMIN. So do the active aggregator's fields in procfs and sysfs,
// but netlink (IFLA_BOND_AD_INFO) gives those to every reader on 6.x
// kernels. What no source gave is nil.
type LACP struct {
	Active         *bool   `json:"active"`
	Rate           *string `json:"rate"`
	MinLinks       *int    `json:"min_links"`
	ADSelect       *string `json:"ad_select"`
	SystemPriority *int    `json:"system_priority"`
	SystemMAC      *string `json:"system_mac"`
	// NoActiveAggregator is set when the kernel said "bond X has no active
	// aggregator"; AggregatorID is then nil.
	NoActiveAggregator bool    `json:"no_active_aggregator"`
	AggregatorID       *int    `json:"aggregator_id"`
	NumPorts           *int    `json:"num_ports"`
	ActorKey           *int    `json:"actor_key"`
	PartnerKey         *int    `json:"partner_key"`
	PartnerMAC         *string `json:"partner_mac"`
}

// Slave is one enslaved interface. Bond.Slaves keeps the kernel's enslave
// order, which the transmit hash depends on.
type Slave struct {
	Name      string  `json:"name"`
	MIIStatus *string `json:"mii_status"`
	// State is "active" or "backup" (bonding_slave/state).
	State               *string      `json:"state"`
	SpeedMbps           *int         `json:"speed_mbps"`
	Duplex              *string      `json:"duplex"`
	MTU                 *int         `json:"mtu"`
	OperState           *string      `json:"operstate"`
	LinkFailureCount    *int         `json:"link_failure_count"`
	PermHWAddr          *string      `json:"perm_hwaddr"`
	QueueID             *int         `json:"queue_id"`
	AggregatorID        *int         `json:"aggregator_id"`
	ActorChurnState     *string      `json:"actor_churn_state"`
	PartnerChurnState   *string      `json:"partner_churn_state"`
	ActorChurnedCount   *int         `json:"actor_churned_count"`
	PartnerChurnedCount *int         `json:"partner_churned_count"`
	Actor               *ActorPort   `json:"actor"`
	Partner             *PartnerPort `json:"partner"`
	// OVS holds what only Open vSwitch has of a member; nil for Linux.
	OVS      *OVSMember `json:"ovs,omitempty"`
	Counters Counters   `json:"-"`
}

// Port is one end of a slave's LACP conversation: our actor, or the partner
// as heard in its LACPDUs. Key is the actor's "port key" or the partner's
// "oper key"; JSON names them as the kernel does (ActorPort, PartnerPort).
type Port struct {
	SystemPriority *int       `json:"system_priority"`
	SystemMAC      *string    `json:"system_mac"`
	Key            *int       `json:"-"`
	PortPriority   *int       `json:"port_priority"`
	PortNumber     *int       `json:"port_number"`
	PortState      *PortState `json:"port_state"`
}

// PortState is the LACP port state byte (IEEE 802.1AX actor/partner state).
type PortState uint8

// The port-state bits, lowest first.
const (
	StateActivity PortState = 1 << iota
	StateShortTimeout
	StateAggregation
	StateSynchronization
	StateCollecting
	StateDistributing
	StateDefaulted
	StateExpired
)

var portStateNames = [8]string{
	"activity", "short_timeout", "aggregation", "synchronization",
	"collecting", "distributing", "defaulted", "expired",
}

// PortStateNames lists the bit names in bit order (bit 0 first).
func PortStateNames() []string { return portStateNames[:] }

// Has reports whether all bits of b are set.
func (s PortState) Has(b PortState) bool { return s&b == b }

// Flags names the set bits, lowest bit first.
func (s PortState) Flags() []string {
	flags := make([]string, 0, 8)
	for i, name := range portStateNames {
		if s&(1<<i) != 0 {
			flags = append(flags, name)
		}
	}
	return flags
}

// String gives the names of the set bits joined by "|", or "none".
func (s PortState) String() string {
	if s == 0 {
		return "none"
	}
	return strings.Join(s.Flags(), "|")
}

// Healthy reports a port that negotiated and carries traffic both ways:
// activity, aggregation, synchronization, collecting and distributing set,
// neither defaulted nor expired. Short timeout is a setting, not health.
func (s PortState) Healthy() bool {
	const want = StateActivity | StateAggregation | StateSynchronization | StateCollecting | StateDistributing
	return s.Has(want) && s&(StateDefaulted|StateExpired) == 0
}

// ActorPort is our side of a slave's LACP conversation ("details actor lacp
// pdu"). In JSON its key is "port_key".
type ActorPort struct{ Port }

// PartnerPort is the far side as heard in its LACPDUs ("details partner lacp
// pdu"). In JSON its key is "oper_key".
type PartnerPort struct{ Port }

// MarshalJSON writes the port with the kernel's "port_key" and the state's
// bit names.
func (a ActorPort) MarshalJSON() ([]byte, error) { return a.marshal("port_key") }

// MarshalJSON writes the port with the kernel's "oper_key" and the state's
// bit names.
func (p PartnerPort) MarshalJSON() ([]byte, error) { return p.marshal("oper_key") }

// UnmarshalJSON reads what MarshalJSON wrote (a recording being replayed).
func (a *ActorPort) UnmarshalJSON(data []byte) error { return a.unmarshal(data, "port_key") }

// UnmarshalJSON reads what MarshalJSON wrote (a recording being replayed).
func (p *PartnerPort) UnmarshalJSON(data []byte) error { return p.unmarshal(data, "oper_key") }

// unmarshal reads the wire form of a Port. port_state_flags is derived
// from port_state, so it is not read back.
func (p *Port) unmarshal(data []byte, keyName string) error {
	var wire struct {
		SystemPriority *int       `json:"system_priority"`
		SystemMAC      *string    `json:"system_mac"`
		PortPriority   *int       `json:"port_priority"`
		PortNumber     *int       `json:"port_number"`
		PortState      *PortState `json:"port_state"`
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return err
	}
	*p = Port{SystemPriority: wire.SystemPriority, SystemMAC: wire.SystemMAC, PortPriority: wire.PortPriority,
		PortNumber: wire.PortNumber, PortState: wire.PortState}
	if raw, ok := keys[keyName]; ok {
		if err := json.Unmarshal(raw, &p.Key); err != nil {
			return err
		}
	}
	return nil
}

// marshal writes the wire form of a Port; keyName is port_key or oper_key.
func (p Port) marshal(keyName string) ([]byte, error) {
	m := map[string]any{
		"system_priority":  p.SystemPriority,
		"system_mac":       p.SystemMAC,
		keyName:            p.Key,
		"port_priority":    p.PortPriority,
		"port_number":      p.PortNumber,
		"port_state":       nil,
		"port_state_flags": nil,
	}
	if p.PortState != nil {
		m["port_state"] = int(*p.PortState)
		m["port_state_flags"] = p.PortState.Flags()
	}
	return json.Marshal(m)
}

// Slave returns the slave called name, or nil.
func (b *Bond) Slave(name string) *Slave {
	for i := range b.Slaves {
		if b.Slaves[i].Name == name {
			return &b.Slaves[i]
		}
	}
	return nil
}

// Is8023AD reports whether the bond runs 802.3ad (LACP): a Linux bond in
// mode 802.3ad, or an Open vSwitch bond with LACP on.
func (b *Bond) Is8023AD() bool {
	return b.Mode != nil && *b.Mode == Mode8023AD || b.IsOVS() && b.LACP != nil
}

// The kernel's mode names, as sysfs and netlink spell them.
const (
	ModeRoundRobin   = "balance-rr"
	ModeActiveBackup = "active-backup"
	ModeXOR          = "balance-xor"
	ModeBroadcast    = "broadcast"
	Mode8023AD       = "802.3ad"
	ModeTLB          = "balance-tlb"
	ModeALB          = "balance-alb"
)

// Modes lists the mode names by their numeric value (0..6).
var Modes = [...]string{ModeRoundRobin, ModeActiveBackup, ModeXOR, ModeBroadcast, Mode8023AD, ModeTLB, ModeALB}

// HashPolicies lists the xmit_hash_policy names by numeric value (0..5).
var HashPolicies = [...]string{"layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4", "vlan+srcmac"}
