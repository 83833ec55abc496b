package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bondtop/bondtop/collector"
)

// This file exports bondtop's diagnosis, so an alert fires on the same
// verdict the dashboard shows.

var descFinding = prometheus.NewDesc(namespace+"_finding",
	"1 for each current finding of bondtop's diagnosis (id as in --json and the README), once per slave it involves; slave is empty for the bond as a whole.",
	[]string{"bond", "id", "severity", "slave"}, nil)

// collectFindings emits the bond's findings.
func collectFindings(ch chan<- prometheus.Metric, b *collector.BondSample) {
	// One series per label set: a scrape with a duplicate would be
	// rejected whole.
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
				ch <- gauge(descFinding, 1, b.Name, k.id, k.severity, k.slave)
			}
		}
	}
}
