package model

import (
	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/intent"
)

// HostConfig is what the host's configuration files say its bonds should
// be, beside the running settings a comparison needs that the bond model
// does not carry. The Sampler (collector) attaches one to every snapshot
// (Snapshot.Config), shared until it is read again: replaced, never
// modified.
type HostConfig struct {
	Intent intent.Config
	// Running holds, per bond, what sysfs says beyond the model.
	Running map[string]*RunningConfig
}

// RunningConfig is a running bond's settings as sysfs prints them.
type RunningConfig struct {
	// Options are the bond's bonding/ files (bonding.ReadOptions).
	Options map[string]string
	// HWAddr is the bond's MAC address; "" when unknown.
	HWAddr string
	// Devices holds each slave's hardware, by slave name.
	Devices map[string]bonding.Device
}
