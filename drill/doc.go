// Package drill owns the failover drill: it takes one slave of a bond away
// (administratively down, as a pulled cable, or by moving the bond's
// active_slave: a soft failover), brings it back, and measures what each
// step really cost: the time to the bond's own event, the longest gap on
// the wire each way, the packets lost and reordered, the gratuitous ARPs
// and unsolicited neighbour advertisements that left the slaves, and for
// 802.3ad when the aggregator settled. Findings name the bond setting
// behind a long gap.
//
// The measuring streams are the load engine's (package load): small
// sequence-numbered UDP datagrams at a known rate to a peer that speaks
// iperf3 (bondtop serve or iperf3 -s). Every datagram this host receives
// is timestamped here, so the receive gap is measured to the packet; the
// send gap is the peer's loss count over the rate, an estimate. With only
// the peer sending (--direction rx) the drill keeps this host silent from
// the failover to the end of the failback, so a switch learns the move
// from the bond's own notifications alone: one test spans both phases,
// without keep-alives, its results exchanged afterwards, and every frame
// the host sends meanwhile is counted (docs/drill.md).
//
// Run is the one entry point: `bondtop drill` and the dashboard's drill key
// both call it. It acts through netlink only. Safety comes first: it needs
// root, refuses to take away the bond's last usable slave, writes what it
// is about to change to a state file before changing it, and puts the
// slave's admin state and the active slave back on every way out (an
// error, a cancelled context, a panic); Restore finishes the job after a
// drill that was killed.
package drill
