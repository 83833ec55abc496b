package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
)

// Finding is collector.Finding: the type lives in collector so snapshots
// can carry findings without collector importing this package.
type Finding = collector.Finding

// The severities, as collector defines them.
const (
	Info     = collector.SeverityInfo
	Warning  = collector.SeverityWarning
	Critical = collector.SeverityCritical
)

// The finding IDs. They are stable: scripts and the dashboard key on them.
const (
	IDImbalanceTx     = "imbalance-tx"
	IDImbalanceRx     = "imbalance-rx"
	IDHashPolicy      = "hash-policy-one-peer"
	IDFewFlows        = "few-flows"
	IDWhatIf          = "what-if"
	IDNoAggregator    = "lacp-no-aggregator"
	IDAggregator      = "lacp-aggregator"
	IDPartnerMissing  = "lacp-no-partner"
	IDPartnerDiffers  = "lacp-partner-differs"
	IDDefaulted       = "lacp-defaulted"
	IDExpired         = "lacp-expired"
	IDChurned         = "lacp-churned"
	IDKeyMismatch     = "lacp-key-mismatch"
	IDTimeoutMismatch = "lacp-timeout-mismatch"
	IDNumPorts        = "lacp-num-ports"
	IDLinkDown        = "link-down"
	IDLinkFlapping    = "link-flapping"
	IDSpeedMismatch   = "link-speed-mismatch"
	IDHalfDuplex      = "link-half-duplex"
	IDMTUMismatch     = "link-mtu-mismatch"
	IDErrors          = "link-errors"
	IDOverruns        = "link-overruns"
	IDDrops           = "link-drops"
	IDRoundRobin      = "rr-reordering"
	IDMinLinks        = "min-links"

	// The configuration and the settings that break failover (drift.go,
	// failover.go).
	IDConfigDrift       = "config-drift"
	IDConfigUnknown     = "config-unknown"
	IDConfigConflict    = "config-conflict"
	IDNoLinkMonitor     = "no-link-monitor"
	IDARPValidateNone   = "arp-validate-none"
	IDARPNoTargets      = "arp-no-targets"
	IDDelayRounded      = "delay-rounded"
	IDFailbackNoUpdelay = "failback-no-updelay"
	IDNoGratARP         = "no-grat-arp"
	IDFailOverMACNeeded = "fail-over-mac-needed"
	IDSharedFate        = "shared-fate"
	IDLACPRateSlow      = "lacp-rate-slow"
	IDBondMACChanged    = "bond-mac-changed"
	IDLACPSystemChanged = "lacp-system-changed"
	IDHashCheck         = "hash-check"
	IDSwitchHash        = "rx-switch-hash"
)

// DefaultWindow is the span trends and shares are judged over.
const DefaultWindow = 30 * time.Second

// Window keeps the snapshots of the last span and fills each new one's
// findings. It is what the Sampler's Options.Analyze runs; not safe for
// concurrent use (the Sampler calls it from its goroutine).
type Window struct {
	span  time.Duration
	snaps []*collector.Snapshot
	// whatIf caches the what-if table per flow table: ten thousand flows
	// under every policy cost milliseconds, and a table lives for several
	// ticks.
	whatIf map[string]whatIfEntry
	// changes keeps, per bond, the last change of its MAC and of its
	// LACP system MAC seen in the run: their findings outlive the window.
	changes map[string][]collector.Event
}

type whatIfEntry struct {
	table    *collector.FlowTable
	measured *collector.MeasuredTraffic
	w        *WhatIfTable
}

// NewWindow keeps span of history (DefaultWindow when zero).
func NewWindow(span time.Duration) *Window {
	if span <= 0 {
		span = DefaultWindow
	}
	return &Window{span: span, whatIf: map[string]whatIfEntry{}, changes: map[string][]collector.Event{}}
}

// Fill adds s to the window and sets the findings of each of its bonds
// (never nil: an empty list says "analyzed, nothing found"). Call it
// before s is handed to anyone else: it writes into s.
func (w *Window) Fill(s *collector.Snapshot) {
	w.snaps = append(w.snaps, s)
	cut := 0
	for cut < len(w.snaps)-1 && s.Time.Sub(w.snaps[cut].Time) > w.span {
		cut++
	}
	if cut > 0 {
		w.snaps = slices.Delete(w.snaps, 0, cut)
	}
	for _, e := range s.Events {
		w.changes[e.Bond] = keepChange(w.changes[e.Bond], e)
	}
	for i := range s.Bonds {
		b := &s.Bonds[i]
		v := newView(w.snaps, b)
		v.whatIf = w.cachedWhatIf(b, v.mix)
		v.changes = w.changes[b.Name]
		b.Findings = v.analyze()
		b.Intended, b.Drift = v.drift()
	}
}

// keepChange adds e to a bond's kept identity changes when it is one,
// replacing the older change of its kind.
func keepChange(kept []collector.Event, e collector.Event) []collector.Event {
	if e.Kind != collector.EventBondMAC && e.Kind != collector.EventLACPSystem {
		return kept
	}
	kept = slices.DeleteFunc(kept, func(k collector.Event) bool { return k.Kind == e.Kind })
	return append(kept, e)
}

// cachedWhatIf is the what-if of b's mix: recomputed when the flow
// table or the measured traffic changed (every sample with a meter; the
// measured mix is bounded by maxMixFlows).
func (w *Window) cachedWhatIf(b *collector.BondSample, mix *txMix) *WhatIfTable {
	if mix == nil {
		delete(w.whatIf, b.Name)
		return nil
	}
	if e, ok := w.whatIf[b.Name]; ok && e.table == b.Flows && e.measured == b.Measured {
		return e.w
	}
	t := whatIfOf(b, mix)
	w.whatIf[b.Name] = whatIfEntry{b.Flows, b.Measured, t}
	return t
}

// Analyze returns the findings of every bond of the last snapshot of
// history (oldest first), judging trends and shares over all of them.
func Analyze(history []*collector.Snapshot) map[string][]Finding {
	out := map[string][]Finding{}
	if len(history) == 0 {
		return out
	}
	last := history[len(history)-1]
	for i := range last.Bonds {
		b := &last.Bonds[i]
		v := newView(history, b)
		v.whatIf = whatIfOf(b, v.mix)
		for _, s := range history {
			for _, e := range s.Events {
				if e.Bond == b.Name {
					v.changes = keepChange(v.changes, e)
				}
			}
		}
		out[b.Name] = v.analyze()
	}
	return out
}

// view is one bond over the window: its samples, oldest first, the last
// being now.
type view struct {
	now     *collector.BondSample
	host    *collector.Host
	samples []sample
	usable  []string
	whatIf  *WhatIfTable
	// config is the host's configuration and running settings (nil
	// without); changes the bond's identity changes in the run.
	config  *collector.HostConfig
	changes []collector.Event
	mix     *txMix // nil without flows
}

type sample struct {
	b       *collector.BondSample
	seconds float64
}

func newView(history []*collector.Snapshot, b *collector.BondSample) *view {
	v := &view{now: b}
	for _, s := range history {
		if sb := s.Bond(b.Name); sb != nil {
			v.samples = append(v.samples, sample{sb, s.IntervalSeconds})
		}
	}
	if len(history) > 0 {
		v.host = history[len(history)-1].Host
		v.config = history[len(history)-1].Config
	}
	v.usable, _ = bonding.UsableSlaves(BondOf(b))
	if hashMode(b) {
		v.mix = mixOf(b) // only the hashing modes' findings read it
	}
	return v
}

// analyze runs every check and orders the findings worst first, then by ID.
func (v *view) analyze() []Finding {
	out := []Finding{}
	checks := []func() []Finding{
		v.imbalance, v.flowFindings, v.hashCheck, v.switchHash, v.lacp, v.links, v.counters, v.roundRobin, v.minLinks,
		v.configFindings, v.failover,
	}
	if v.now.IsOVS() {
		checks = v.ovsChecks()
	}
	for _, check := range checks {
		out = append(out, check()...)
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		if c := cmp.Compare(b.Severity.Rank(), a.Severity.Rank()); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

func (v *view) mode() string {
	if v.now.Mode == nil {
		return ""
	}
	return *v.now.Mode
}

func (v *view) policy() string {
	if v.now.XmitHashPolicy == nil {
		return ""
	}
	return strings.Fields(*v.now.XmitHashPolicy + " ")[0]
}

// hashes reports whether the bond picks the transmit slave by the hash.
func (v *view) hashes() bool {
	switch v.mode() {
	case bonding.ModeXOR, bonding.Mode8023AD:
		return true
	case bonding.ModeTLB:
		return v.now.TLBDynamicLB != nil && *v.now.TLBDynamicLB == 0
	}
	return false
}

// slaveOrder keeps names in the bond's enslave order.
func (v *view) slaveOrder(names map[string]bool) []string {
	out := []string{}
	for i := range v.now.Slaves {
		if names[v.now.Slaves[i].Name] {
			out = append(out, v.now.Slaves[i].Name)
		}
	}
	return out
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", x*100) }

func deref[T any](p *T) (T, bool) {
	if p == nil {
		var zero T
		return zero, false
	}
	return *p, true
}

func str(p *string) string {
	s, _ := deref(p)
	return s
}

// slaveOf finds a slave of a sample by name (BondSample.Slaves: the
// embedded bonding.Bond's list is empty in samples).
func slaveOf(b *collector.BondSample, name string) *collector.SlaveSample {
	for i := range b.Slaves {
		if b.Slaves[i].Name == name {
			return &b.Slaves[i]
		}
	}
	return nil
}

// BondOf rebuilds the bonding.Bond of a sample, slaves included (a
// sample keeps them in BondSample.Slaves only).
func BondOf(b *collector.BondSample) *bonding.Bond {
	bond := b.Bond
	bond.Slaves = make([]bonding.Slave, len(b.Slaves))
	for i := range b.Slaves {
		bond.Slaves[i] = b.Slaves[i].Slave
	}
	return &bond
}
