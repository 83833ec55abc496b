package drill

import (
	"fmt"
	"time"

	"github.com/bondtop/bondtop/model"
)

// FindingLeftBehind is the ID of the finding a drill's state file raises.
const FindingLeftBehind = "drill-left-behind"

// WithLeftBehind wraps a snapshot analyzer (diagnose's Fill) so that every
// bond a killed drill left changed (its state file in dir) carries a
// critical finding saying what to run. Only the live host's dashboard
// should use it: the state files are this host's.
//
// The files are looked for at most once every leftBehindEvery of
// snapshot time (and whenever the clock goes back): a look is a failed
// open and a few allocations per bond, which at 10 Hz would be most of
// the diagnosis's steady-state cost, and a killed drill is news that a
// second does not stale. Between two looks each bond carries the last
// look's finding.
func WithLeftBehind(analyze func(*model.Snapshot), dir string) func(*model.Snapshot) {
	var lookedAt time.Time
	looked := false
	left := map[string]model.Finding{} // by bond, from the last look
	return func(s *model.Snapshot) {
		if analyze != nil {
			analyze(s)
		}
		if d := s.Time.Sub(lookedAt); !looked || d >= leftBehindEvery || d < 0 {
			lookedAt, looked = s.Time, true
			clear(left)
			for i := range s.Bonds {
				if f, ok := leftBehindFinding(dir, s.Bonds[i].Name); ok {
					left[s.Bonds[i].Name] = f
				}
			}
		}
		if len(left) == 0 {
			return
		}
		for i := range s.Bonds {
			b := &s.Bonds[i]
			if f, ok := left[b.Name]; ok {
				// Worst first, as the analyzer orders them.
				b.Findings = append([]model.Finding{f}, b.Findings...)
			}
		}
	}
}

// leftBehindEvery is how often WithLeftBehind looks for state files.
const leftBehindEvery = time.Second

// leftBehindFinding is the finding of bond's state file in dir, if it has one.
func leftBehindFinding(dir, bond string) (model.Finding, bool) {
	st, err := ReadState(dir, bond)
	if err != nil || st == nil {
		return model.Finding{}, false
	}
	return model.Finding{ID: FindingLeftBehind, Severity: model.SeverityCritical, Slaves: []string{st.Slave},
		Message: fmt.Sprintf("a failover drill left %s changed (--how %s, pid %d, %s)", st.Slave, st.How, st.PID, st.Started.Format(time.DateTime)),
		Detail: fmt.Sprintf("The drill was stopped before it put the bond back (kill -9, a crash): %s may still be down, or %s not the active slave. Run bondtop drill %s --restore.",
			st.Slave, orNone(st.ActiveBefore), bond)}, true
}
