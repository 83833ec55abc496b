package diagnose

import (
	"fmt"

	"github.com/bondtop/bondtop/bonding"
)

// roundRobin: balance-rr sends consecutive packets of one TCP flow on
// different slaves; they arrive out of order, and TCP takes reordering
// beyond net.ipv4.tcp_reordering for loss (seed: a 2 x GbE balance-rr
// pair moving one GbE's worth).
func (v *view) roundRobin() []Finding {
	if v.mode() != bonding.ModeRoundRobin || len(v.usable) < 2 {
		return nil
	}
	f := Finding{ID: IDRoundRobin, Severity: Warning, Slaves: []string{}}
	setting := "net.ipv4.tcp_reordering unknown"
	if v.host != nil && v.host.TCPReordering != nil {
		r := *v.host.TCPReordering
		setting = fmt.Sprintf("net.ipv4.tcp_reordering = %d", r)
		if r > 3 {
			f.Severity = Info
			setting += " (raised)"
		} else {
			setting += " (the default)"
		}
	}
	f.Message = fmt.Sprintf("balance-rr over %d slaves reorders TCP segments; %s", len(v.usable), setting)
	f.Detail = ("balance-rr sends packet after packet on the next slave, so the segments of one TCP flow arrive out of order at the peer. TCP takes a gap of more than tcp_reordering segments for loss: it retransmits and halves its window, and one stream often moves no more than a single slave would. Raising net.ipv4.tcp_reordering (e.g. to 127, on the receiving hosts, sysctl -w) makes TCP tolerate it, at the cost of slower loss recovery; receive-side coalescing suffers too. For many flows, 802.3ad or balance-xor with xmit_hash_policy layer3+4 spreads them without reordering; one flow then stays on one slave.")
	return []Finding{f}
}

// minLinks: in 802.3ad the bond drops carrier when fewer than min_links
// ports are active.
func (v *view) minLinks() []Finding {
	b := v.now
	if !b.Is8023AD() || b.LACP == nil || b.LACP.MinLinks == nil || *b.LACP.MinLinks <= 0 {
		return nil
	}
	minLinks := *b.LACP.MinLinks
	active := len(v.usable)
	if b.LACP.NumPorts != nil {
		active = min(active, *b.LACP.NumPorts)
	}
	f := Finding{ID: IDMinLinks, Slaves: []string{}}
	switch {
	case active < minLinks:
		f.Severity = Critical
		f.Message = fmt.Sprintf("%d active ports, below min_links %d: the bond is down", active, minLinks)
	case active == minLinks:
		f.Severity = Warning
		f.Message = fmt.Sprintf("%d active ports = min_links %d: one more failure takes the bond down", active, minLinks)
	default:
		return nil
	}
	f.Detail = fmt.Sprintf("With min_links %d the bond keeps carrier only while at least %d ports are in the active aggregator; below that it reports no carrier and routing or a higher bond fails over. That is the point of min_links, but with the margin gone a single link failure is an outage: bring the missing slaves back (see the link and LACP findings), or lower min_links if fewer links are enough.", minLinks, minLinks)
	return []Finding{f}
}
