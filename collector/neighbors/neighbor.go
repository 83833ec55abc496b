package neighbors

import "time"

// Protocol names as they appear in JSON.
const (
	ProtoLLDP = "lldp"
	ProtoCDP  = "cdp"
)

// Neighbor is what one frame from the far end of a cable said. Fields the
// frame did not carry are nil (or empty), never zero.
type Neighbor struct {
	Protocol string `json:"protocol"`
	// ChassisID is rendered as lldpcli does: a MAC as aa:bb:..., an
	// address as text, anything else as the sender's string.
	ChassisID         string  `json:"chassis_id"`
	ChassisIDSubtype  string  `json:"chassis_id_subtype"`
	SystemName        *string `json:"system_name"`
	SystemDescription *string `json:"system_description"`
	// Platform is CDP's hardware platform ("cisco WS-C3850-48T"); nil
	// for LLDP, which has no such field.
	Platform        *string `json:"platform,omitempty"`
	PortID          string  `json:"port_id"`
	PortIDSubtype   string  `json:"port_id_subtype"`
	PortDescription *string `json:"port_description"`
	// ManagementAddresses are IPv4/IPv6 addresses (or MACs) in text.
	ManagementAddresses []string `json:"management_addresses"`
	// PortVLANID is the untagged VLAN of the switch port (802.1 port VLAN
	// TLV, CDP native VLAN).
	PortVLANID *int   `json:"port_vlan_id"`
	VLANs      []VLAN `json:"vlans"`
	// MaxFrameSize is the largest frame the switch port passes (802.3
	// TLV; CDP's MTU plus 18 bytes of Ethernet header and FCS).
	MaxFrameSize *int         `json:"max_frame_size"`
	Aggregation  *Aggregation `json:"aggregation"`
	Autoneg      *Autoneg     `json:"autoneg"`
	// MAUType is the operational MAU type (RFC 4836 dot3MauType number).
	MAUType *int `json:"mau_type"`
	// TTLSeconds is how long the sender asked us to keep this; 0 means
	// "forget me now" (an LLDP shutdown frame).
	TTLSeconds int `json:"ttl_s"`
	// AgeSeconds is the time since the frame arrived, filled in when a
	// listener hands the neighbour out.
	AgeSeconds float64 `json:"age_s"`
	// Received is when the frame arrived (monotonic); not in JSON.
	Received time.Time `json:"-"`
}

// VLAN is one of the switch port's VLANs with its name (802.1 VLAN name TLV).
type VLAN struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Aggregation is the link aggregation TLV: whether the switch port can be
// and is in a LAG, and the LAG's port id.
type Aggregation struct {
	Capable bool `json:"capable"`
	Enabled bool `json:"enabled"`
	PortID  *int `json:"port_id"`
}

// Autoneg is the MAC/PHY TLV's auto-negotiation support and status.
type Autoneg struct {
	Supported bool `json:"supported"`
	Enabled   bool `json:"enabled"`
}
