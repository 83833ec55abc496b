package diagnose

import (
	"fmt"
	"strings"

	"github.com/bondtop/bondtop/bonding"
)

// The findings of Open vSwitch bonds. OVS does not use the kernel's
// transmit hash: balance-slb hashes the source MAC and VLAN, balance-tcp
// the L3/L4 headers, each into 256 buckets that OVS moves between members
// every bond-rebalance-interval to even out their loads. bond/show lists
// each member's buckets with the kB each carried, so what the hash did is
// read, not predicted.
const (
	IDOVSBucketDominant = "ovs-bucket-dominant"
	IDOVSRebalanceOff   = "ovs-rebalance-off"
	IDOVSLACPPartial    = "ovs-lacp-partial"
)

// ovsBucketFloorKB is the least bond load worth judging: a few LACPDUs
// and ARPs land in one bucket and prove nothing.
const ovsBucketFloorKB = 1000

// ovsChecks are the checks that apply to an Open vSwitch bond: the
// kernel's hash, aggregator, configuration-file and failover-setting
// checks do not (OVS keeps its configuration in OVSDB).
func (v *view) ovsChecks() []func() []Finding {
	return []func() []Finding{v.links, v.counters, v.ovsBuckets, v.ovsRebalance, v.ovsLACP}
}

func ovsBalancing(mode string) bool {
	return mode == bonding.OVSBalanceSLB || mode == bonding.OVSBalanceTCP
}

// ovsEnabled lists the members OVS sends on.
func (v *view) ovsEnabled() []string {
	var out []string
	for _, s := range v.now.Slaves {
		if s.OVS != nil && s.OVS.Enabled {
			out = append(out, s.Name)
		}
	}
	return out
}

// ovsBuckets: one bucket carries most of the bond. Rebalancing moves
// whole buckets, so a bucket that is one flow (balance-tcp) or one MAC
// (balance-slb) stays on one member however often OVS rebalances.
func (v *view) ovsBuckets() []Finding {
	if !ovsBalancing(v.mode()) || len(v.ovsEnabled()) < 2 {
		return nil
	}
	var total, top int64
	topHash, topMember := -1, ""
	for _, s := range v.now.Slaves {
		if s.OVS == nil {
			continue
		}
		for _, bk := range s.OVS.Buckets {
			total += bk.LoadKB
			if bk.LoadKB > top {
				top, topHash, topMember = bk.LoadKB, bk.Hash, s.Name
			}
		}
	}
	if total < ovsBucketFloorKB || topHash < 0 {
		return nil
	}
	share := float64(top) / float64(total)
	if share < 0.5 {
		return nil
	}
	what, hashes := "one flow", "balance-tcp hashes the L3/L4 headers, so a bucket this heavy is one conversation"
	if v.mode() == bonding.OVSBalanceSLB {
		what, hashes = "one MAC", "balance-slb hashes the source MAC and VLAN, so a bucket this heavy is one sender"
	}
	return []Finding{{ID: IDOVSBucketDominant, Severity: Warning, Slaves: []string{topMember},
		Message: fmt.Sprintf("bucket %d carries %s of the bond on %s: %s, which rebalancing cannot split", topHash, pct(share), topMember, what),
		Detail: "OVS balances by moving whole hash buckets between members every bond-rebalance-interval; " + hashes +
			": it stays on one member whatever OVS does, so that member's speed caps it. Spread the load over more flows (parallel streams, more clients), " +
			"or for balance-slb behind one MAC consider balance-tcp with LACP. `ovs-appctl bond/show` lists the buckets."}}
}

// ovsRebalance: bond-rebalance-interval=0 leaves every bucket on the
// member it was first hashed to.
func (v *view) ovsRebalance() []Finding {
	if !ovsBalancing(v.mode()) || v.now.OVS == nil || v.now.OVS.RebalanceMs != 0 {
		return nil
	}
	f := Finding{ID: IDOVSRebalanceOff, Severity: Info, Slaves: []string{},
		Message: v.now.Name + ": rebalancing is off (other_config:bond-rebalance-interval=0): buckets never move between members",
		Detail: "Without rebalancing, a member that drew the busy buckets keeps them while others idle. " +
			"ovs-vsctl set port " + v.now.Name + " other_config:bond-rebalance-interval=10000 restores OVS's default."}
	// Uneven loads make it a warning: rebalancing would act on them.
	var loads []int64
	var total int64
	for _, s := range v.now.Slaves {
		if s.OVS == nil || !s.OVS.Enabled {
			continue
		}
		var l int64
		for _, bk := range s.OVS.Buckets {
			l += bk.LoadKB
		}
		loads = append(loads, l)
		total += l
	}
	if len(loads) >= 2 && total >= ovsBucketFloorKB {
		for _, l := range loads {
			if float64(l) > 1.5*float64(total)/float64(len(loads)) {
				f.Severity = Warning
			}
		}
	}
	return []Finding{f}
}

// ovsLACP: LACP negotiated on some members only, or on none.
func (v *view) ovsLACP() []Finding {
	if v.now.OVS == nil || v.now.OVS.LACP == "" || v.now.OVS.LACP == "off" {
		return nil
	}
	var ok, bad []string
	var why []string
	for _, s := range v.now.Slaves {
		if s.OVS == nil || s.OVS.LACPStatus == "" {
			continue
		}
		if s.OVS.LACPStatus == "current attached" {
			ok = append(ok, s.Name)
			continue
		}
		bad = append(bad, s.Name)
		why = append(why, s.Name+" "+s.OVS.LACPStatus)
	}
	switch {
	case len(bad) == 0:
		return nil
	case len(ok) == 0:
		sev := Critical
		if v.now.OVS.FallbackAB {
			sev = Warning // lacp-fallback-ab keeps one member sending
		}
		return []Finding{{ID: IDOVSLACPPartial, Severity: sev, Slaves: bad,
			Message: fmt.Sprintf("LACP negotiated on no member (%s)", strings.Join(why, ", ")),
			Detail:  "No LACPDUs are current from the switch: check that its ports are in one LACP port-channel (mode active) and that the cabling matches. `ovs-appctl lacp/show` shows what each member hears."}}
	}
	return []Finding{{ID: IDOVSLACPPartial, Severity: Warning, Slaves: bad,
		Message: fmt.Sprintf("LACP negotiated on %s only: %s", strings.Join(ok, ", "), strings.Join(why, ", ")),
		Detail:  "Members that are not current and attached carry nothing. A defaulted member hears no LACPDUs (the switch port is not in the port-channel, or is cabled elsewhere); an expired one lost them recently. Compare `ovs-appctl lacp/show` with the switch's port-channel."}}
}
