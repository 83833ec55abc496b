// Package collector is the sampling engine: it owns a bond over time.
// The Sampler turns a Source's readings into immutable Snapshots
// (package model) with rates from counter deltas, fills again those
// handed back to it (Options.Recycle), keeps the history rings behind
// the graphs, finds the events between one reading and the next, and
// runs the trackers of the optional capabilities: the flow table of this
// host's sockets, the measured traffic (the flow meter's cumulative
// per-flow counters, collector/flowmeter, turned into rates, per-slave
// sums and the check of each flow's slave against the hash), the switch
// side of each slave (collector/neighbors), the physical layer, the
// host's settings and configuration. Each tracker is one type behind
// one method (tracker.go), run in a fixed order every tick.
//
// The Source contract, the required interface and every optional
// capability, is one file: source.go. The sources are packages of their
// own: collector/live (the running kernel), collector/rootdir (a copy of
// /proc and /sys under a directory, --root), collector/demo (a simulated
// host, --demo) and fleet (the bonds of many hosts, from Prometheus).
//
// collector never imports a UI package or a source; consumers receive
// Snapshots.
package collector
