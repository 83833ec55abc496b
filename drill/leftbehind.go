package drill

import (
	"fmt"
	"time"

	"github.com/bondtop/bondtop/collector"
)

// FindingLeftBehind is the ID of the finding a drill's state file raises.
const FindingLeftBehind = "drill-left-behind"

// WithLeftBehind wraps a snapshot analyzer (diagnose's Fill) so that every
// bond a killed drill left changed (its state file in dir) carries a
// critical finding saying what to run. Only the live host's dashboard
// should use it: the state files are this host's.
func WithLeftBehind(analyze func(*collector.Snapshot), dir string) func(*collector.Snapshot) {
	return func(s *collector.Snapshot) {
		if analyze != nil {
			analyze(s)
		}
		for i := range s.Bonds {
			b := &s.Bonds[i]
			st, err := ReadState(dir, b.Name)
			if err != nil || st == nil {
				continue
			}
			f := collector.Finding{ID: FindingLeftBehind, Severity: collector.SeverityCritical, Slaves: []string{st.Slave},
				Message: fmt.Sprintf("a failover drill left %s changed (--how %s, pid %d, %s)", st.Slave, st.How, st.PID, st.Started.Format(time.DateTime)),
				Detail: fmt.Sprintf("The drill was stopped before it put the bond back (kill -9, a crash): %s may still be down, or %s not the active slave. Run bondtop drill %s --restore.",
					st.Slave, orNone(st.ActiveBefore), b.Name)}
			// Worst first, as the analyzer orders them.
			b.Findings = append([]collector.Finding{f}, b.Findings...)
		}
	}
}
