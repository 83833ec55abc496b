package metrics

import (
	"runtime"
	"slices"
	"sync"

	"github.com/bondtop/bondtop/model"
)

// This file owns the metrics about bondtop itself: what build runs, when
// it last read the host, how its reads fail, and which bonds it has seen.
// They let an alert tell "all is well" from "bondtop sees nothing".

// Option configures New.
type Option func(*Exporter)

// Version sets the version bondtop_build_info reports.
func Version(v string) Option {
	return func(e *Exporter) { e.version = v }
}

// The kinds of bondtop_sample_errors_total. Every kind is served from the
// start (at 0), so rate() and increase() see the first error.
const (
	// ErrorRead: a read of the host (or --root tree) failed as a whole;
	// the same count as bondtop_read_errors_total.
	ErrorRead = "read"
	// ErrorNoBondingDriver: a sample found no bonding driver (it was
	// unloaded after bondtop started).
	ErrorNoBondingDriver = "no_bonding_driver"
	// ErrorPartial: a sample read the host but some of it failed (a file
	// or a netlink dump): the reading's warnings, not the configuration's
	// or the flow table's.
	ErrorPartial = "partial"
)

var errorKinds = []string{ErrorNoBondingDriver, ErrorPartial, ErrorRead}

var (
	descBuildInfo = newDesc(namespace+"_build_info",
		"bondtop's version and the Go version it was built with; always 1.", gauge, "version", "goversion")
	descLastSample = newDesc(namespace+"_last_sample_timestamp_seconds",
		"Unix time of the latest sample that read the host; served even while reads fail, so time() minus it is the age of what bondtop knows.", gauge)
	descSampleErrors = newDesc(namespace+"_sample_errors_total",
		"Samples that failed or were incomplete, by kind: read (the whole read failed), no_bonding_driver (the driver is gone), partial (part of the host could not be read).", counter, "kind")
	descBonds = newDesc(namespace+"_bonds",
		"Bonds in the latest sample.", gauge)
	descLACPReadable = newDesc(namespace+"_lacp_details_readable",
		"1 when bondtop can read the root-only LACPDU details (partner, port states); 0 when it runs without root and those series are missing.", gauge)
)

// health is the exporter's record of its own sampling; Update and
// ReadFailed write it, scrapes read it.
type health struct {
	mu     sync.Mutex
	errors map[string]uint64
	// seen holds every bond a sample held since start: a host has a
	// handful, and a bond removed on purpose is forgotten at restart.
	seen       map[string]bool
	lastSample float64 // Unix seconds; 0 before the first sample
}

// sampled notes a snapshot: its time, its bonds, and whether it was
// complete.
func (h *health) sampled(snap *model.Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen == nil {
		h.seen = make(map[string]bool)
	}
	for i := range snap.Bonds {
		h.seen[snap.Bonds[i].Name] = true
	}
	for _, name := range snap.Missing {
		h.seen[name] = true
	}
	if !snap.Time.IsZero() {
		h.lastSample = float64(snap.Time.UnixNano()) / 1e9
	}
	switch {
	case snap.NoBonding:
		h.count(ErrorNoBondingDriver)
	case snap.ReadWarnings > 0:
		h.count(ErrorPartial)
	}
}

func (h *health) failed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.count(ErrorRead)
}

func (h *health) count(kind string) {
	if h.errors == nil {
		h.errors = make(map[string]uint64)
	}
	h.errors[kind]++
}

// collectHealth emits the metrics about bondtop itself. They are served
// even while reads fail: that is when they matter.
func (e *Exporter) collectHealth(out batch) {
	out.Add(descBuildInfo, 1, e.version, runtime.Version())
	h := &e.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastSample > 0 {
		out.Add(descLastSample, h.lastSample)
	}
	for _, kind := range errorKinds {
		out.Add(descSampleErrors, float64(h.errors[kind]), kind)
	}
}

// collectPresence emits bondtop_bonds and bondtop_bond_present 0 for every
// bond seen since start (or followed on the command line) that the
// snapshot lacks: a bond that vanishes stays visible as a 0 rather than
// as series that quietly end.
func (e *Exporter) collectPresence(out batch, snap *model.Snapshot) {
	out.Add(descBonds, float64(len(snap.Bonds)))
	out.Add(descLACPReadable, boolValue(!snap.Unprivileged))
	h := &e.health
	h.mu.Lock()
	gone := make([]string, 0, len(h.seen))
	for name := range h.seen {
		if snap.Bond(name) == nil {
			gone = append(gone, name)
		}
	}
	h.mu.Unlock()
	for _, name := range snap.Missing {
		if !slices.Contains(gone, name) {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	for _, name := range gone {
		out.Add(descBondPresent, 0, name)
	}
}
