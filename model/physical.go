package model

import (
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/bonding/module"
)

// Physical is a slave's physical layer as ethtool reports it. Each part
// is nil (its JSON key absent) when the driver does not report it: a
// veth or virtio NIC has a link state and nothing else.
type Physical struct {
	// LinkState is what `ethtool DEV` calls "Link detected", with the
	// driver's reason for a down link where it gives one.
	LinkState *bonding.LinkState `json:"link_state,omitempty"`
	// FEC is the forward error correction mode and counters (`ethtool
	// -I --show-fec DEV`).
	FEC *bonding.FEC `json:"fec,omitempty"`
	// Module is the SFP/QSFP transceiver (`ethtool -m DEV`).
	Module *module.Module `json:"module,omitempty"`
	// ReadAt is when this was read (the reads are rarer than ticks).
	ReadAt time.Time `json:"-"`
}

// Empty reports whether the driver gave nothing at all.
func (p *Physical) Empty() bool {
	return p == nil || (p.LinkState == nil && p.FEC == nil && p.Module == nil)
}
