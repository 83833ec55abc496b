package diagnose

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// WhatIfTable is where a bond's current flows would go under every hash
// policy, and under the current policy with other numbers of slaves.
type WhatIfTable struct {
	// Weighting is "measured tx rate" for the flows the meter measured
	// (every flow leaving the bond), "tx rate" for this host's sockets
	// when their rates are known, else "flow count" (the first socket
	// dump, or no byte counts).
	Weighting string
	Flows     int
	// Measured is set when the flows are the meter's.
	Measured bool
	Current  bonding.Policy
	// Policies has one scenario per policy, in policy number order, over
	// the bond's usable slaves; the current one is marked.
	Policies []Scenario
	// Counts keeps the current policy with 2 up to two more slaves than
	// there are usable: fewer keeps the first usable slaves in enslave
	// order, more adds slaves named +1, +2.
	Counts []Scenario
}

// Scenario is one policy and slave set applied to the flows.
type Scenario struct {
	Policy  bonding.Policy
	Slaves  []string
	Current bool
	// Shares are each slave's part of the weight the hash places; Largest
	// is the biggest of them.
	Shares  []float64
	Largest float64
	// Unpredictable is the part of the weight the kernel places by
	// something user space cannot see (encap3+4 uses the socket's hash);
	// Reason says why.
	Unpredictable float64
	Reason        string
}

// Split writes the shares as whole percents, "52/48", or "unpredictable".
func (s *Scenario) Split() string {
	if len(s.Shares) == 0 || s.Unpredictable >= 0.999 {
		return "unpredictable"
	}
	parts := make([]string, len(s.Shares))
	for i, x := range s.Shares {
		parts[i] = strconv.Itoa(int(x*100 + 0.5))
	}
	return strings.Join(parts, "/")
}

// hashMode reports whether the bond's mode places flows by the hash, and
// the mode the scenarios are computed for.
func hashMode(b *model.BondSample) bool {
	if b.Mode == nil {
		return false
	}
	switch *b.Mode {
	case bonding.ModeXOR, bonding.Mode8023AD:
		return true
	case bonding.ModeTLB:
		return b.TLBDynamicLB != nil && *b.TLBDynamicLB == 0
	}
	return false
}

// WhatIf computes the what-if table of b's transmit mix (the flows the
// meter measured, else the flow table's sockets); nil without flows or
// when the bond's mode does not hash (active-backup, balance-rr,
// balance-alb, balance-tlb picking by load, broadcast).
func WhatIf(b *model.BondSample) *WhatIfTable {
	if !hashMode(b) || b.XmitHashPolicy == nil {
		return nil
	}
	return whatIfOf(b, mixOf(b))
}

func whatIfOf(b *model.BondSample, mix *txMix) *WhatIfTable {
	if mix == nil || len(mix.flows) == 0 || !hashMode(b) || b.XmitHashPolicy == nil {
		return nil
	}
	cur, err := bonding.ParsePolicy(*b.XmitHashPolicy)
	if err != nil {
		return nil
	}
	usable := usableOf(b, nil)
	if len(usable) == 0 {
		return nil
	}
	mode := *b.Mode
	if mode == bonding.ModeTLB {
		mode = bonding.ModeXOR // balance-tlb with tlb_dynamic_lb=0 hashes as xor does
	}
	wt := &WhatIfTable{Weighting: mix.weighting, Flows: len(mix.flows), Current: cur, Measured: mix.measured}
	for p := range bonding.Policy(len(bonding.HashPolicies)) {
		s := scenario(mode, p, mix.kernel, usable, mix)
		s.Current = p == cur
		wt.Policies = append(wt.Policies, s)
	}
	for n := 2; n <= len(usable)+2; n++ {
		if n == len(usable) {
			continue
		}
		slaves := append([]string(nil), usable[:min(n, len(usable))]...)
		for k := 1; len(slaves) < n; k++ {
			slaves = append(slaves, "+"+strconv.Itoa(k))
		}
		wt.Counts = append(wt.Counts, scenario(mode, cur, mix.kernel, slaves, mix))
	}
	return wt
}

func scenario(mode string, p bonding.Policy, k bonding.KernelVersion, slaves []string, mix *txMix) Scenario {
	s := Scenario{Policy: p, Slaves: slaves, Shares: make([]float64, len(slaves))}
	pred := &bonding.Predictor{Mode: mode, Policy: p, Kernel: k, Usable: slaves}
	placed, unseen := 0.0, 0.0
	for i := range mix.flows {
		f := &mix.flows[i]
		if readsMAC(p) && !f.haveMAC {
			unseen += f.weight
			if s.Reason == "" {
				s.Reason = "next hop MAC unknown"
			}
			continue
		}
		c, err := pred.Predict(&f.packet)
		if err != nil || c.Outcome != bonding.Hashed {
			unseen += f.weight
			if s.Reason == "" {
				if err != nil {
					s.Reason = err.Error()
				} else {
					s.Reason = c.Reason
				}
			}
			continue
		}
		s.Shares[c.Index] += f.weight
		placed += f.weight
	}
	if placed > 0 {
		for i := range s.Shares {
			s.Shares[i] /= placed
			s.Largest = max(s.Largest, s.Shares[i])
		}
	}
	if total := placed + unseen; total > 0 {
		s.Unpredictable = unseen / total
	}
	return s
}

func readsMAC(p bonding.Policy) bool {
	return p == bonding.PolicyLayer2 || p == bonding.PolicyLayer23 || p == bonding.PolicyEncap23
}

// predictable reports whether a scenario places most of the weight.
func (s *Scenario) predictable() bool { return len(s.Shares) > 0 && s.Unpredictable < 0.5 }

// whatIfFinding names the policy that spreads the current flows best.
func (v *view) whatIfFinding() []Finding {
	wt := v.whatIf
	if wt == nil || len(wt.Policies) == 0 || len(v.usable) < 2 {
		return nil
	}
	cur := &wt.Policies[wt.Current]
	var best *Scenario
	for i := range wt.Policies {
		s := &wt.Policies[i]
		if s.Current || !s.predictable() {
			continue
		}
		if best == nil || s.Largest < best.Largest-1e-9 {
			best = s
		}
	}
	f := Finding{ID: IDWhatIf, Severity: Info, Slaves: []string{}}
	gain := 0.0
	if best != nil && cur.predictable() {
		gain = cur.Largest - best.Largest
	}
	switch {
	case best != nil && gain >= 0.1:
		f.Message = fmt.Sprintf("with %s: %s (now %s: %s)", best.Policy, best.Split(), cur.Policy, cur.Split())
		if gain >= 0.25 {
			f.Severity = Warning
		}
	case cur.predictable():
		f.Message = fmt.Sprintf("no other policy spreads these %d flows better than %s: %s", wt.Flows, cur.Policy, cur.Split())
	default:
		return nil
	}
	var d strings.Builder
	if wt.Measured {
		fmt.Fprintf(&d, "The %d flows measured leaving %s (forwarded and VM traffic included), weighted by %s, as each policy would place them over %s:", wt.Flows, v.now.Name, wt.Weighting, strings.Join(v.usable, "/"))
	} else {
		fmt.Fprintf(&d, "The %d flows of this host that cross %s, weighted by %s, as each policy would place them over %s:", wt.Flows, v.now.Name, wt.Weighting, strings.Join(v.usable, "/"))
	}
	for i := range wt.Policies {
		s := &wt.Policies[i]
		fmt.Fprintf(&d, " %s %s", s.Policy, s.Split())
		if s.Current {
			d.WriteString(" (now)")
		}
		if s.Unpredictable > 0 && s.Unpredictable < 0.999 {
			fmt.Fprintf(&d, " (%s unplaced)", pct(s.Unpredictable))
		}
		if s.Unpredictable >= 0.999 && s.Reason != "" {
			fmt.Fprintf(&d, " (%s)", s.Reason)
		}
		d.WriteString(";")
	}
	for i := range wt.Counts {
		s := &wt.Counts[i]
		fmt.Fprintf(&d, " with %d slaves: %s;", len(s.Slaves), s.Split())
	}
	if wt.Measured {
		d.WriteString(" Shares of the last interval's flows, not a promise: flows come and go.")
	} else {
		d.WriteString(" Shares of one dump's flows, not a promise: flows come and go, and traffic from elsewhere (forwarding, VMs) is not in the table.")
	}
	if best != nil && gain >= 0.1 {
		fmt.Fprintf(&d, " To change: echo %s > /sys/class/net/%s/bonding/xmit_hash_policy (takes effect at once, no restart), and the same in the persistent configuration (BONDING_OPTS, netplan transmit-hash-policy, nmcli bond.options).", best.Policy, v.now.Name)
	}
	f.Detail = d.String()
	return []Finding{f}
}
