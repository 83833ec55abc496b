package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/bondtop/bondtop/model"
)

// stateLog is the --headless exporter's journal of the host's state: no
// bonding driver, no bonds, a followed bond missing, no root for the LACP
// details. Each is a state /metrics serves (bondtop_bonds 0,
// bondtop_sample_errors_total{kind="no_bonding_driver"},
// bondtop_bond_present 0, bondtop_lacp_details_readable 0), never a reason
// to stop; the log says each once, when it begins, and says when it ends,
// so a host without bonds does not fill the journal. See
// docs/prometheus.md.
type stateLog struct {
	w    io.Writer
	said map[string]bool
}

func newStateLog(w io.Writer) *stateLog {
	return &stateLog{w: w, said: map[string]bool{}}
}

// sink is a collector sink: it runs on the sampling goroutine and only
// reads the snapshot.
func (l *stateLog) sink(snap *model.Snapshot) {
	states := hostStates(snap)
	if len(states) == 0 && len(l.said) == 0 {
		return // the usual tick: bonds seen, as root
	}
	now := make(map[string]bool, len(states))
	for _, s := range states {
		now[s] = true
		if !l.said[s] {
			fmt.Fprintf(l.w, "bondtop: %s\n", s)
		}
	}
	for s := range l.said {
		if !now[s] {
			fmt.Fprintf(l.w, "bondtop: no longer so: %s\n", s)
		}
	}
	l.said = now
}

// hostStates lists, in words, what keeps the exporter from seeing the
// bonds it could, each with the metric that tells Prometheus.
func hostStates(snap *model.Snapshot) []string {
	var out []string
	switch {
	case snap.NoBonding:
		out = append(out, "no bonding driver on this host (serving bondtop_bonds 0 and counting bondtop_sample_errors_total{kind=\"no_bonding_driver\"} until `modprobe bonding`)")
	case len(snap.Bonds) == 0 && len(snap.Missing) == 0:
		out = append(out, "no bonds on this host (serving bondtop_bonds 0)")
	}
	if len(snap.Missing) > 0 {
		out = append(out, fmt.Sprintf("not on this host: %s (serving bondtop_bond_present 0)", strings.Join(snap.Missing, ", ")))
	}
	if snap.Unprivileged {
		out = append(out, "not root: the LACPDU details (partner, port states) need CAP_NET_ADMIN (serving bondtop_lacp_details_readable 0)")
	}
	return out
}
