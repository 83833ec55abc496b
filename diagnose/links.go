package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/model"
)

// links: slaves down or flapping, and slaves that differ in speed, duplex
// or MTU.
func (v *view) links() []Finding {
	b := v.now
	var out []Finding
	down := map[string]bool{}
	for i := range b.Slaves {
		if st := str(b.Slaves[i].MIIStatus); st != "" && st != "up" {
			down[b.Slaves[i].Name] = true
		}
	}
	if len(down) > 0 {
		names := v.slaveOrder(down)
		f := Finding{ID: IDLinkDown, Severity: Warning, Slaves: names}
		if len(down) == len(b.Slaves) {
			f.Severity = Critical
		}
		f.Message = fmt.Sprintf("%s link down (%d of %d slaves)", strings.Join(names, ", "), len(down), len(b.Slaves))
		f.Detail = "A slave without link carries nothing; the bond runs on the others"
		if v.mode() == bonding.ModeActiveBackup {
			f.Detail += " and has no standby left if the active slave fails"
		} else if v.hashes() {
			f.Detail += ", and the flows it carried were hashed again over the slaves left"
		}
		f.Detail += ". Check the cable or optic, the switch port (shut, err-disabled) and the NIC: ethtool " + names[0] + ", ip -s link show " + names[0] + ", dmesg."
		out = append(out, f)
	}

	// Link failures counted during the window: a flapping link.
	flaps := map[string]int{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if p := v.win.firstSlave(s.Name); p != nil && p.linkFailures.rose(s.LinkFailureCount) {
			flaps[s.Name] = *s.LinkFailureCount - p.linkFailures.v
		}
	}
	if len(flaps) > 0 {
		names := v.slaveOrder(boolSet(flaps))
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s +%d", n, flaps[n]))
		}
		secs := v.windowSeconds()
		out = append(out, Finding{ID: IDLinkFlapping, Severity: Warning, Slaves: names,
			Message: fmt.Sprintf("link failures in the last %.0f s: %s", secs, strings.Join(parts, ", ")),
			Detail:  "link_failure_count rose: the link went down and came back. Each loss moves the slave's traffic elsewhere and, in 802.3ad, renegotiates LACP. A dirty optic, a bad cable, a switch port flapping, or a miimon/updelay too short for the NIC; see dmesg and the switch's log."})
	}

	// Differences between the slaves with link. The groups of slaves by
	// speed and by MTU are built only when the values differ: a healthy
	// bond, judged every second, allocates nothing here.
	speed := func(s *model.SlaveSample) (int, bool) {
		return deref(s.SpeedMbps)
	}
	mtu := func(s *model.SlaveSample) (int, bool) {
		return deref(s.MTU)
	}
	speeds := groupsIfDiffer(b, down, speed, func(k int) bool { return k > 0 }, nil)
	mtus := groupsIfDiffer(b, down, mtu, func(int) bool { return true }, b.MTU)
	half := map[string]bool{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if !down[s.Name] && s.Duplex != nil && *s.Duplex == "half" {
			half[s.Name] = true
		}
	}
	if len(speeds) > 1 {
		parts, all := describeGroups(speeds, func(k int) string { return units.Speed(k) })
		detail := "Slaves at different speeds share the traffic badly: the hash gives each slave the same number of flows, so the slow one saturates first."
		if b.Is8023AD() {
			detail = "In 802.3ad a slave's key encodes its speed: slaves at another speed form their own aggregator, and only one aggregator carries traffic (ad_select decides which)."
		}
		out = append(out, Finding{ID: IDSpeedMismatch, Severity: Warning, Slaves: v.slaveOrder(all),
			Message: "slave speeds differ: " + strings.Join(parts, ", "),
			Detail:  detail + " A slave that negotiated a lower speed than it should has a cable, optic or autonegotiation problem: ethtool SLAVE shows what it negotiated."})
	}
	if len(half) > 0 {
		names := v.slaveOrder(half)
		out = append(out, Finding{ID: IDHalfDuplex, Severity: Warning, Slaves: names,
			Message: strings.Join(names, ", ") + " at half duplex",
			Detail:  "Half duplex means collisions and a fraction of the throughput; 802.3ad needs full duplex to aggregate a port at all. It is almost always an autonegotiation mismatch (one side forced, the other negotiating): set both ends to autonegotiate, or force both the same."})
	}
	// The bond sends frames of its own MTU on every slave: a slave below
	// it is as bad as slaves that differ.
	if bondMTU, ok := deref(b.MTU); ok && len(mtus) > 0 {
		if _, same := mtus[bondMTU]; !same || len(mtus) > 1 {
			mtus[bondMTU] = append(mtus[bondMTU], b.Name)
		}
	}
	if len(mtus) > 1 {
		parts, all := describeGroups(mtus, func(k int) string { return fmt.Sprintf("MTU %d", k) })
		// Involved: the slaves off the bond's MTU, else all that differ.
		if bondMTU, ok := deref(b.MTU); ok {
			for _, n := range mtus[bondMTU] {
				delete(all, n)
			}
		}
		delete(all, b.Name)
		out = append(out, Finding{ID: IDMTUMismatch, Severity: Warning, Slaves: v.slaveOrder(all),
			Message: "MTUs differ: " + strings.Join(parts, ", "),
			Detail:  "The bond sends frames of its own MTU on every slave: a slave with a smaller MTU drops them, and jumbo frames work only when the bond, every slave, the switch ports and the peers all use the same MTU. Set the MTU on the bond (it applies it to the slaves), and on the switch."})
	}
	return out
}

// counters: errors, overruns and drops counted on the slaves during the
// window.
func (v *view) counters() []Finding {
	type sums = counterSums
	per := v.win.counts
	secs := v.windowSeconds()
	pick := func(get func(*sums) uint64, minFraction float64) (map[string]bool, []string) {
		counts := func(name string, p *sums) bool {
			n := get(p)
			if n == 0 || (minFraction > 0 && float64(n) < minFraction*float64(p.packets)) {
				return false
			}
			// Drops on a backup slave are the bond discarding what
			// arrives there, by design.
			if minFraction > 0 {
				if sl := slaveOf(v.now, name); sl != nil && str(sl.State) == "backup" {
					return false
				}
			}
			return true
		}
		var set map[string]bool // made only when a slave counts: clean slaves cost no allocation
		for name, p := range per {
			if counts(name, p) {
				if set == nil {
					set = map[string]bool{}
				}
				set[name] = true
			}
		}
		var parts []string
		for _, n := range v.slaveOrder(set) {
			parts = append(parts, fmt.Sprintf("%s +%d", n, get(per[n])))
		}
		return set, parts
	}
	var out []Finding
	if set, parts := pick(func(p *sums) uint64 { return p.errs }, 0); len(set) > 0 {
		out = append(out, Finding{ID: IDErrors, Severity: Warning, Slaves: v.slaveOrder(set),
			Message: fmt.Sprintf("errors in the last %.0f s: %s", secs, strings.Join(parts, ", ")),
			Detail:  "Receive errors (CRC, frame, length) point at the physical link: cable, optic, a port of the switch, or a duplex mismatch. Transmit errors at the NIC or its driver. ethtool -S SLAVE breaks them down; swap the cable or optic first."})
	}
	if set, parts := pick(func(p *sums) uint64 { return p.over }, 0); len(set) > 0 {
		out = append(out, Finding{ID: IDOverruns, Severity: Warning, Slaves: v.slaveOrder(set),
			Message: fmt.Sprintf("receive overruns in the last %.0f s: %s", secs, strings.Join(parts, ", ")),
			Detail:  "Overruns (rx_over_errors, rx_fifo_errors) mean frames arrived faster than the host took them off the NIC: the receive ring filled. Enlarge it (ethtool -g SLAVE shows the maximum, ethtool -G SLAVE rx N sets it), spread interrupts over CPUs (irqbalance, RSS queues), or check for a CPU busy elsewhere. A slave that receives most of the bond's traffic overruns first."})
	}
	if set, parts := pick(func(p *sums) uint64 { return p.drops }, 0.001); len(set) > 0 {
		out = append(out, Finding{ID: IDDrops, Severity: Info, Slaves: v.slaveOrder(set),
			Message: fmt.Sprintf("drops in the last %.0f s: %s", secs, strings.Join(parts, ", ")),
			Detail:  "Dropped packets were received but discarded by the kernel: a full backlog or ring under load, or frames nobody handles (unknown protocol or VLAN). Under load they come with overruns; otherwise they are often harmless. nstat and ethtool -S SLAVE tell which."})
	}
	return out
}

func (v *view) windowSeconds() float64 { return v.win.seconds() }

func val(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// groupsIfDiffer groups the slaves with link (not in down) by a value
// (kept when counts), the bond's own value too when other is known and
// some slave has a value: nil when all those values are one, which is
// what a healthy bond shows and then costs no allocation.
func groupsIfDiffer(b *model.BondSample, down map[string]bool, value func(*model.SlaveSample) (int, bool), counts func(int) bool, other *int) map[int][]string {
	first, seen, differ := 0, false, false
	for i := range b.Slaves {
		s := &b.Slaves[i]
		k, ok := value(s)
		if down[s.Name] || !ok || !counts(k) {
			continue
		}
		if !seen {
			first, seen = k, true
		} else if k != first {
			differ = true
		}
	}
	if !seen || (!differ && (other == nil || *other == first)) {
		return nil
	}
	groups := map[int][]string{}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if k, ok := value(s); ok && !down[s.Name] && counts(k) {
			groups[k] = append(groups[k], s.Name)
		}
	}
	return groups
}

func boolSet[T any](m map[string]T) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// describeGroups writes "10G: a,b" per value, in value order, and returns
// every name.
func describeGroups(groups map[int][]string, name func(int) string) ([]string, map[string]bool) {
	keys := make([]int, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	all := map[string]bool{}
	for _, k := range keys {
		parts = append(parts, name(k)+" on "+strings.Join(groups[k], ","))
		for _, n := range groups[k] {
			all[n] = true
		}
	}
	return parts, all
}
