package metrics

import (
	"github.com/bondtop/bondtop/model"
)

// This file exports bondtop's diagnosis, so an alert fires on the same
// verdict the dashboard shows.

var descFinding = newDesc(namespace+"_finding",
	"1 for each current finding of bondtop's diagnosis (id as in --json; the ids are listed in docs/dashboard.md), once per slave it involves; slave is empty for the bond as a whole.",
	gauge, "bond", "id", "severity", "slave")

// collectFindings emits the bond's findings.
func collectFindings(out batch, b *model.BondSample) {
	// One series per label set, though a finding may name a slave twice
	// (the exposition would keep the first of two anyway, but a repeat
	// is no second finding).
	type key struct{ id, severity, slave string }
	done := make(map[key]bool)
	for _, f := range b.Findings {
		slaves := f.Slaves
		if len(slaves) == 0 {
			slaves = []string{""}
		}
		for _, s := range slaves {
			k := key{f.ID, string(f.Severity), s}
			if !done[k] {
				done[k] = true
				out.Add(descFinding, 1, b.Name, k.id, k.severity, k.slave)
			}
		}
	}
}
