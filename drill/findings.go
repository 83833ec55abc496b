package drill

import (
	"fmt"
	"math"
	"strings"
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
		notified := ph.GARP.Count+ph.GARP.UnsolNA > 0
		silent := ph.Name == "failover" && p.ActiveSlaveMode() && !notified
		switch {
		case silent && val(ph.GapRxMs) > longGapMs:
			out = append(out, fmt.Sprintf("%s without gratuitous ARP or unsolicited NA: rx gap %s; %s, so the switch kept sending to %s until its MAC table aged out or the bond moved back: set num_grat_arp 1 and num_unsol_na 1",
				failoverWords(p), ms(ph.GapRxMs), peerNotifWords(s), p.Slave))
		case ph.Name == "failback" && gap >= slowGapMs && s.UpDelayMs == 0 && s.Primary != "":
			out = append(out, fmt.Sprintf("failback gap %s: updelay 0 brings %s back before its switch port forwards; try updelay 2000",
				ms(ptr(gap)), s.Primary))
		case gap >= longGapMs:
			out = append(out, fmt.Sprintf("%s gap %s (tx %s, rx %s)", ph.Name, ms(ptr(gap)), ms(ph.GapTxMs), ms(ph.GapRxMs)))
		}
		switch {
		case silent && val(ph.GapRxMs) > longGapMs:
			// named above, with the gap
		case silent && p.How == Active && r.Direction != RX && ph.ActiveMs != nil:
			out = append(out, fmt.Sprintf("no gratuitous ARP or unsolicited NA left on the %s (%s): the datagrams this host sent taught the switch the new port, so the rx gap %s is what a host that sends sees; one that mostly receives waits for the switch's MAC table to age: --direction rx measures that",
				failoverWords(p), peerNotifWords(s), ms(ph.GapRxMs)))
		case ph.ActiveMs != nil && s.NumPeerNotif > 0 && !notified:
			out = append(out, fmt.Sprintf("%s: the active slave changed but no gratuitous ARP or unsolicited NA was seen (num_grat_arp %d)", ph.Name, s.NumPeerNotif))
		case ph.ActiveMs != nil && ph.GARP.Count > 0 && ph.GARP.Count < s.NumPeerNotif:
			out = append(out, fmt.Sprintf("%s: %d gratuitous ARP(s) left the bond, num_grat_arp asks for %d (some kernels send only the first when the link monitor fails over)",
				ph.Name, ph.GARP.Count, s.NumPeerNotif))
		}
		if ph.HostFrames != nil && *ph.HostFrames > 0 {
			out = append(out, fmt.Sprintf("%s: this host sent %d frame(s) of its own after the action (%s): a switch may have learned the bond's new port from them, so the rx gap can be shorter than the bond alone gives",
				ph.Name, *ph.HostFrames, strings.Join(ph.HostFrameKinds, ", ")))
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

// failoverWords names the failover kind: a soft one moves active_slave.
func failoverWords(p *Plan) string {
	if p.How == Active {
		return "soft failover"
	}
	return "failover"
}

// peerNotifWords says what the bond's peer notification settings send
// (num_grat_arp and num_unsol_na are one value in the kernel).
func peerNotifWords(s Settings) string {
	switch {
	case s.NumPeerNotif == 0:
		return "num_grat_arp is 0 and num_unsol_na is 0"
	case s.NumPeerNotif > 0:
		return fmt.Sprintf("num_grat_arp and num_unsol_na are %d, yet none left", s.NumPeerNotif)
	}
	return "none left (num_grat_arp unknown)"
}

func val(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
