// Package collector owns a bond over time: the Sources that read the kernel
// (live: netlink + procfs + sysfs + ethtool; root: a copy of /proc and /sys
// under a directory), the Sampler that turns readings into immutable
// Snapshots with rates, the history rings behind the graphs, and the events
// found by comparing one snapshot with the next.
//
// collector never imports a UI package; consumers receive Snapshots.
package collector
