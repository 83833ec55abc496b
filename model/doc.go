// Package model is what a sample is: the Snapshot of every followed bond
// at one instant, each bond's and slave's state and traffic (BondSample,
// SlaveSample, Totals, ErrorCounts), the events found between two
// samples, the findings of a diagnosis, the flow table of this host's
// sockets and the flow meter's measured traffic, the switch side and the
// physical layer of each slave, and the host's settings and
// configuration. These are plain data with the methods that read them,
// their JSON form included (docs/json.md): the types the sampling engine
// (package collector) fills and every consumer reads, so diagnose,
// metrics and record depend on this package and not on the engine.
//
// A Snapshot is immutable once handed out; model does no I/O and keeps
// no clock.
package model
