package model

// Severity grades a Finding. The values are the JSON words.
type Severity string

// The severities, from the mildest.
const (
	// SeverityInfo: worth knowing, nothing is wrong yet (a what-if, a
	// setting that limits one flow's speed).
	SeverityInfo Severity = "info"
	// SeverityWarning: the bond works below what it could, or one more
	// fault takes capacity away.
	SeverityWarning Severity = "warning"
	// SeverityCritical: the bond is down, or carries everything on fewer
	// links than it has.
	SeverityCritical Severity = "critical"
)

// Rank orders severities: info 1, warning 2, critical 3, anything else 0.
func (s Severity) Rank() int {
	switch s {
	case SeverityInfo:
		return 1
	case SeverityWarning:
		return 2
	case SeverityCritical:
		return 3
	}
	return 0
}

// Finding is one diagnosis about a bond: what is wrong or worth knowing,
// why, and what to do. The type lives here, not in package diagnose, so a
// Snapshot can carry findings (JSON, recordings, the dashboard) while
// the sampling engine (package collector) stays free of diagnose: its
// Sampler runs an injected analyzer (collector.Options.Analyze), which
// diagnose provides.
type Finding struct {
	// ID is stable across releases ("imbalance-tx", "lacp-defaulted"):
	// scripts and the dashboard key on it. A bond has at most one finding
	// per ID; Slaves says which slaves it involves.
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	// Slaves involved, in enslave order; empty for the bond as a whole.
	Slaves []string `json:"slaves"`
	// Message is one line: what is wrong, with the numbers.
	Message string `json:"message"`
	// Detail says why, and what to do about it.
	Detail string `json:"detail"`
}
