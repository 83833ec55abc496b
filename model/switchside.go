package model

import (
	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/neighbors"
)

// LACPDUSample is a slave's LACPDU and marker counters with the time since
// the last LACPDU arrived.
type LACPDUSample struct {
	bonding.LACPDUCounters
	// LastRxAgeSeconds is the time since a LACPDU last arrived, seen by
	// the packet socket or from the rx counter's last rise; nil when
	// neither has seen one since bondtop started.
	LastRxAgeSeconds *float64 `json:"last_rx_age_s"`
	// PartnerView is the partner's view of our port, as its last LACPDU
	// said; absent when no packet socket heard one.
	PartnerView *neighbors.LACPPort `json:"partner_view,omitempty"`
	// SilentSeconds is at least how long no LACPDU arrived: the age when
	// known, else the time the rx counter has stood still while watched.
	SilentSeconds float64 `json:"-"`
}

// SwitchSide is what a slave's far end says, present in a SlaveSample only
// when the source listens (a --root tree or a replay of an older recording
// has none, and then the keys are absent rather than null).
type SwitchSide struct {
	// Neighbor is the LLDP or CDP neighbour heard on the slave; nil when
	// none was heard (or listening failed: BondSample.NeighborsWhy).
	Neighbor *neighbors.Neighbor `json:"neighbor"`
	// LACPDU is the 802.3ad conversation's counters; absent for slaves of
	// bonds in other modes and on kernels before 4.19.
	LACPDU *LACPDUSample `json:"lacpdu,omitempty"`
	// Carrier counts link transitions (4.16+); absent where not reported.
	Carrier *bonding.CarrierCounts `json:"carrier,omitempty"`
	// FirmwareLLDPAgent is set when the NIC's firmware runs an LLDP agent
	// that consumes the switch's frames; absent when the driver has no
	// such flag.
	FirmwareLLDPAgent *bool `json:"firmware_lldp_agent,omitempty"`
}

// clone is a copy of ss with its neighbour and LACPDU sample its own (a
// recycled snapshot's rooms hold them); the carrier counts and the
// partner's view are never written, and stay shared.
func (ss *SwitchSide) clone() *SwitchSide {
	c := *ss
	c.Neighbor = own(ss.Neighbor)
	if ss.LACPDU != nil {
		pdu := *ss.LACPDU
		pdu.LastRxAgeSeconds = own(pdu.LastRxAgeSeconds)
		c.LACPDU = &pdu
	}
	return &c
}
