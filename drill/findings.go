package drill

import (
	"fmt"
	"math"
)

// Thresholds of the findings: a gap a person notices (an SSH session
// stalls, a health check fails) and one the switch should not cause.
const (
	longGapMs  = 1000
	slowGapMs  = 500
	noticedFor = 50 // ms of bond event latency above what miimon explains
)

// findings name the setting behind what the drill measured.
func findings(p *Plan, r *Result) []string {
	var out []string
	s := p.Settings
	for i := range r.Phases {
		ph := &r.Phases[i]
		gap := math.Max(val(ph.GapTxMs), val(ph.GapRxMs))
		switch {
		case ph.Name == "failover" && p.How == Active && s.NumPeerNotif == 0 && val(ph.GapRxMs) >= longGapMs:
			out = append(out, fmt.Sprintf("soft failover without GARP: rx gap %s; num_grat_arp is 0, so the switch kept sending to %s until its MAC table aged out or the bond moved back: set num_grat_arp 1 (and num_unsol_na 1)",
				ms(ph.GapRxMs), p.Slave))
		case ph.Name == "failover" && val(ph.GapRxMs) >= longGapMs && ph.GARP.Count == 0 && p.ActiveSlaveMode():
			out = append(out, fmt.Sprintf("failover rx gap %s and no gratuitous ARP left the new active slave (num_grat_arp %d): the switch learned the move late", ms(ph.GapRxMs), s.NumPeerNotif))
		case ph.Name == "failback" && gap >= slowGapMs && s.UpDelayMs == 0 && s.Primary != "":
			out = append(out, fmt.Sprintf("failback gap %s: updelay 0 brings %s back before its switch port forwards; try updelay 2000",
				ms(ptr(gap)), s.Primary))
		case gap >= longGapMs:
			out = append(out, fmt.Sprintf("%s gap %s (tx %s, rx %s)", ph.Name, ms(ptr(gap)), ms(ph.GapTxMs), ms(ph.GapRxMs)))
		}
		switch {
		case ph.ActiveMs != nil && s.NumPeerNotif > 0 && ph.GARP.Count+ph.GARP.UnsolNA == 0:
			out = append(out, fmt.Sprintf("%s: the active slave changed but no gratuitous ARP or unsolicited NA was seen (num_grat_arp %d)", ph.Name, s.NumPeerNotif))
		case ph.ActiveMs != nil && ph.GARP.Count > 0 && ph.GARP.Count < s.NumPeerNotif:
			out = append(out, fmt.Sprintf("%s: %d gratuitous ARP(s) left the bond, num_grat_arp asks for %d (some kernels send only the first when the link monitor fails over)",
				ph.Name, ph.GARP.Count, s.NumPeerNotif))
		}
		if ph.Name == "failover" && p.How == Down && ph.EventMs == nil {
			if s.MIIMonMs == 0 && s.ARPIntervalMs == 0 {
				out = append(out, fmt.Sprintf("the bond never noticed %s go down: miimon 0 and arp_interval 0 monitor nothing; set miimon 100", p.Slave))
			} else {
				out = append(out, fmt.Sprintf("the bond did not react to %s going down within the hold", p.Slave))
			}
		} else if ph.Name == "failover" && p.How == Down && s.MIIMonMs > 0 && val(ph.EventMs) > float64(s.MIIMonMs+s.DownDelayMs+noticedFor) {
			out = append(out, fmt.Sprintf("the bond noticed %s going down after %s (miimon %d, downdelay %d)", p.Slave, ms(ph.EventMs), s.MIIMonMs, s.DownDelayMs))
		}
		if ph.Name == "failback" && p.How == Down && s.Primary == p.Slave && ph.ActiveSlave != p.Slave {
			out = append(out, fmt.Sprintf("no failback: %s is the primary but %s stayed active (primary_reselect %s)", p.Slave, orDash(ph.ActiveSlave), orDash(s.PrimaryReselect)))
		}
	}
	return out
}

func val(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
