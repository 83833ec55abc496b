// Package collector owns a bond over time: the Sources that read the kernel
// (live: netlink + procfs + sysfs + ethtool; root: a copy of /proc and /sys
// under a directory), the Sampler that turns readings into immutable
// Snapshots with rates (and fills again those handed back to it), the
// history rings behind the graphs, the events
// found by comparing one snapshot with the next, the flow table of this
// host's sockets, and the measured traffic: the flow meter's
// (collector/flowmeter) cumulative per-flow counters turned into rates,
// per-slave sums and the check of each flow's slave against the hash.
//
// collector never imports a UI package; consumers receive Snapshots.
package collector
