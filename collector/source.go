package collector

import (
	"errors"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// ErrNoBonding means the host has no bonding driver loaded (no
// /proc/net/bonding and no /sys/class/net/bonding_masters).
var ErrNoBonding = errors.New("no bonding driver on this host (/proc/net/bonding is missing): load it with `modprobe bonding`, or try `bondtop --demo`")

// Reading is what a Source saw at one instant.
type Reading struct {
	// Bonds in name order; each slave list in the kernel's enslave order.
	Bonds []bonding.Bond
	// Warnings name files or attributes that could not be read or parsed;
	// the fields they held are nil, everything else is still reported.
	Warnings []string
	// Unprivileged is set when root-only fields (LACP system and partner
	// details) were hidden from this reader.
	Unprivileged bool
	// NoBonding is set on the empty reading a started Sampler makes when
	// the bonding driver went away (ErrNoBonding).
	NoBonding bool
	// CountersAge is how long before Read returned the counters were
	// read, told by a source that can wait in between (the live host: its
	// procfs and sysfs reads after the netlink dump wait while the kernel
	// holds its lock to enslave or release, some hundred milliseconds
	// under load); zero: just before. Rates run between the times the
	// counters were read, on the Sampler's clock: two snapshots made a
	// few milliseconds apart, after a slow read and a quick one, would
	// otherwise divide a slow read's worth of counting by those
	// milliseconds. Counters read apart from the rest (an Open vSwitch
	// bond's, after the kernel's) carry their own age instead
	// (bonding.Counters.Age).
	CountersAge time.Duration
}

// Bond returns the bond called name, or nil.
func (r *Reading) Bond(name string) *bonding.Bond { return bondNamed(r.Bonds, name) }

// bondNamed returns the bond called name in bonds, or nil.
func bondNamed(bonds []bonding.Bond, name string) *bonding.Bond {
	for i := range bonds {
		if bonds[i].Name == name {
			return &bonds[i]
		}
	}
	return nil
}

// Source reads the current state of every bond on a host.
type Source interface {
	// Read returns every bond with its slaves and counters. The error is
	// for the whole host (ErrNoBonding); per-file trouble goes into
	// Reading.Warnings.
	Read() (Reading, error)
	Close() error
}

// Notifier is implemented by sources that learn of link changes between
// ticks (netlink RTNLGRP_LINK), so a failover is sampled at once.
type Notifier interface {
	// Changes delivers a value, without blocking the sender, whenever the
	// kernel reported a change of a bond or one of its slaves.
	Changes() <-chan struct{}
}
