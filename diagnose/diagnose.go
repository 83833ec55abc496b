package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// Finding is model.Finding: the type lives in model so snapshots can
// carry findings without the model or the engine importing this package.
type Finding = model.Finding

// The severities, as model defines them.
const (
	Info     = model.SeverityInfo
	Warning  = model.SeverityWarning
	Critical = model.SeverityCritical
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

// keepChange adds e to a bond's kept identity changes when it is one,
// replacing the older change of its kind.
func keepChange(kept []model.Event, e model.Event) []model.Event {
	if e.Kind != model.EventBondMAC && e.Kind != model.EventLACPSystem {
		return kept
	}
	kept = slices.DeleteFunc(kept, func(k model.Event) bool { return k.Kind == e.Kind })
	return append(kept, e)
}

// view is one bond now, and over the window (win: its running sums and
// what the oldest sample knew).
type view struct {
	now    *model.BondSample
	host   *model.Host
	usable []string
	whatIf *WhatIfTable
	// config is the host's configuration and running settings (nil
	// without); changes the bond's identity changes in the run.
	config  *model.HostConfig
	changes []model.Event
	mix     *txMix // nil without flows
	win     *bondWindow
}

func newView(bw *bondWindow, snap *model.Snapshot, b *model.BondSample) *view {
	v := &view{}
	v.reset(bw, snap, b)
	return v
}

// reset makes v the view of b, forgetting the bond it viewed before (the
// Window reuses one view for every analysis).
func (v *view) reset(bw *bondWindow, snap *model.Snapshot, b *model.BondSample) {
	*v = view{now: b, usable: bw.usable, win: bw}
	if snap != nil {
		v.host = snap.Host
		v.config = snap.Config
	}
	if hashMode(b) {
		v.mix = mixOf(b) // only the hashing modes' findings read it
	}
}

// analyze runs every check and orders the findings worst first, then by ID.
func (v *view) analyze() []Finding {
	out := []Finding{}
	checks := []func() []Finding{
		v.imbalance, v.flowFindings, v.hashCheck, v.switchHash, v.lacp, v.links, v.counters, v.roundRobin, v.minLinks,
		v.configFindings, v.failover, v.switchSide, v.physical,
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
func slaveOf(b *model.BondSample, name string) *model.SlaveSample {
	for i := range b.Slaves {
		if b.Slaves[i].Name == name {
			return &b.Slaves[i]
		}
	}
	return nil
}

// BondOf rebuilds the bonding.Bond of a sample, slaves included (a
// sample keeps them in BondSample.Slaves only).
func BondOf(b *model.BondSample) *bonding.Bond {
	bond := b.Bond
	bond.Slaves = make([]bonding.Slave, len(b.Slaves))
	for i := range b.Slaves {
		bond.Slaves[i] = b.Slaves[i].Slave
	}
	return &bond
}
