package collector

import (
	"fmt"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// configRefreshEvery is how often the Sampler re-reads configuration
// files and running settings: a few dozen small files per bond.
const configRefreshEvery = 5 * time.Second

// configCache re-reads a ConfigReader every configRefreshEvery and finds
// the bond MAC changes between two readings.
type configCache struct {
	r      ConfigReader
	at     time.Time
	latest *model.HostConfig
	// follows tells the bonds whose events a snapshot carries.
	follows func(bond string) bool
}

// get returns the configuration in force and the bond_mac_changed events
// a new reading brought.
func (c *configCache) get(now time.Time, bonds []bonding.Bond) (*model.HostConfig, []model.Event) {
	if !c.at.IsZero() && now.Sub(c.at) < configRefreshEvery {
		return c.latest, nil
	}
	hc := c.r.ReadConfig(bonds)
	var evs []model.Event
	if c.latest != nil {
		for name, rc := range hc.Running {
			old := c.latest.Running[name]
			if old != nil && old.HWAddr != "" && rc.HWAddr != "" && old.HWAddr != rc.HWAddr {
				evs = append(evs, model.Event{Time: now, Bond: name, Kind: model.EventBondMAC, Old: old.HWAddr, New: rc.HWAddr,
					Message: fmt.Sprintf("%s MAC address %s -> %s", name, old.HWAddr, rc.HWAddr)})
			}
		}
	}
	c.at, c.latest = now, hc
	return hc, evs
}

// track gives the snapshot the configuration in force, the MAC changes
// a new reading found, notes on configuration files that could not be
// read and warnings on lines that could not be understood.
func (c *configCache) track(k *tick) {
	hc, evs := c.get(k.now, k.bonds)
	snap := k.snap
	snap.Config = hc
	for _, e := range evs {
		if c.follows(e.Bond) {
			snap.Events = append(snap.Events, e)
		}
	}
	snap.Notes = append(snap.Notes, hc.Intent.Notes...)
	snap.Warnings = append(snap.Warnings, hc.Intent.Warnings...)
}
