package bonding

// Open vSwitch bonds share the Bond model: Kind says "ovs", Mode holds
// OVS's own word (active-backup, balance-slb, balance-tcp), Bridge names
// the bridge, and the OVS fields below hold what only OVS has. The kernel
// has no device for an OVS bond; its members are ordinary links whose
// counters come from netlink like a Linux slave's.

// The bond kinds of Bond.Kind.
const (
	KindLinux = "linux"
	KindOVS   = "ovs"
)

// OVS's bond modes, as ovs-vsctl and bond/show spell them.
const (
	OVSActiveBackup = "active-backup"
	OVSBalanceSLB   = "balance-slb"
	OVSBalanceTCP   = "balance-tcp"
)

// IsOVS reports whether Open vSwitch runs the bond.
func (b *Bond) IsOVS() bool { return b.Kind == KindOVS }

// OVSBond is what Open vSwitch says of a bond beyond the common model.
type OVSBond struct {
	// LACP is the configured mode: active, passive or off.
	LACP string `json:"lacp"`
	// LACPStatus is bond/show's word: negotiated, configured or off;
	// empty when ovs-vswitchd could not be asked.
	LACPStatus string `json:"lacp_status"`
	FallbackAB bool   `json:"lacp_fallback_ab"`
	// RebalanceMs is bond-rebalance-interval (default 10000); 0 means
	// OVS never moves buckets between members.
	RebalanceMs int `json:"rebalance_interval_ms"`
}

// OVSMember is what Open vSwitch says of one member beyond the common
// model.
type OVSMember struct {
	// Enabled is bond/show's word: OVS sends on the member.
	Enabled   bool   `json:"enabled"`
	MayEnable bool   `json:"may_enable"`
	OFPort    *int64 `json:"ofport"`
	// LACPStatus is lacp/show's "current attached", "defaulted detached"
	// and the like; empty without LACP.
	LACPStatus string `json:"lacp_status,omitempty"`
	// LACPRxPDUs and LACPTxPDUs are lacp/show-stats' counts.
	LACPRxPDUs *int64 `json:"lacp_rx_pdus,omitempty"`
	LACPTxPDUs *int64 `json:"lacp_tx_pdus,omitempty"`
	// Buckets are the hash buckets (0..255) OVS assigned to the member,
	// with the kB each carried since the last rebalance (bond/show).
	Buckets []OVSBucket `json:"buckets,omitempty"`
}

// OVSBucket is one of an OVS bond's 256 hash buckets.
type OVSBucket struct {
	Hash   int   `json:"hash"`
	LoadKB int64 `json:"load_kb"`
}
