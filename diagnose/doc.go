// Package diagnose owns bondtop's advice: from a window of model
// Snapshots (and the flow tables they carry) it finds what keeps a bond
// from doing its job — traffic piled on one slave, a hash policy that
// cannot spread the flows there are, too few flows, LACP that did not
// negotiate, links that differ, drop or err, balance-rr reordering, a
// min_links about to take the bond down, flows measured on another slave
// than the hash predicts, a switch whose hash piles received traffic on
// one slave — and says why and what to do. With a flow meter, the flow
// findings and the what-if judge every flow the bond carries (the
// measured transmit mix), not only this host's sockets.
//
// Everything here is a pure function of snapshots: no clock, no I/O.
// Window keeps the recent snapshots and fills BondSample.Findings; the
// Sampler runs it through collector.Options.Analyze. WhatIf gives the
// table behind the what-if finding (every policy, other slave counts) for
// the dashboard.
//
// Imports: model and bonding, never the sampling engine (collector) or
// ui.
package diagnose
