package diagnose

import (
	"fmt"
	"math"
	"net/netip"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/model"
)

// flowFindings are the findings that need the transmit mix (the
// meter's flows or the flow table's sockets).
func (v *view) flowFindings() []Finding {
	mix := v.mix
	if mix == nil || len(mix.flows) == 0 || !v.hashes() || len(v.usable) < 2 {
		return nil
	}
	var out []Finding
	out = append(out, v.onePeer(mix)...)
	out = append(out, v.fewFlows(mix)...)
	out = append(out, v.whatIfFinding()...)
	return out
}

// peerKey is what a MAC-hashing policy tells flows apart by.
type peerKey struct {
	// srcMAC is the bond's own for this host's sockets; a VM's or a
	// router port's for forwarded flows the meter measured.
	srcMAC, mac [6]byte
	src, dst    netip.Addr
}

// onePeer: layer2 (or layer2+3, encap2+3) with nearly all the weight going
// to one next hop (or one address pair): every such flow takes one slave.
func (v *view) onePeer(mix *txMix) []Finding {
	pol, err := bonding.ParsePolicy(v.policy())
	if err != nil || !readsMAC(pol) {
		return nil
	}
	groups := map[peerKey]float64{}
	total := 0.0
	n := 0
	for i := range mix.flows {
		f := &mix.flows[i]
		if !f.haveMAC || f.weight == 0 {
			continue
		}
		k := peerKey{srcMAC: f.packet.SrcMAC, mac: f.packet.DstMAC}
		if pol != bonding.PolicyLayer2 {
			k.src, k.dst = f.src.Addr(), f.dst.Addr()
		}
		groups[k] += f.weight
		total += f.weight
		n++
	}
	if n < 2 || total <= 0 {
		return nil
	}
	var top peerKey
	for k, x := range groups {
		if x > groups[top] || (x == groups[top] && lessKey(k, top)) {
			top = k
		}
	}
	// The top peer's flows all share one slave: worth a finding when they
	// are most of the traffic and well above one slave's fair share.
	share := groups[top] / total
	if share < max(0.5, 1/float64(len(v.usable))+0.25) {
		return nil
	}
	// Where that peer's flows go now.
	slaves := map[string]bool{}
	nextHop := ""
	for i := range mix.flows {
		f := &mix.flows[i]
		if f.haveMAC && f.packet.DstMAC == top.mac && f.packet.SrcMAC == top.srcMAC && (pol == bonding.PolicyLayer2 || (f.src.Addr() == top.src && f.dst.Addr() == top.dst)) {
			if f.choice.Slave != "" {
				slaves[f.choice.Slave] = true
			}
			if f.nextHop.IsValid() && nextHop == "" {
				nextHop = f.nextHop.String() + " "
			}
		}
	}
	on := v.slaveOrder(slaves)
	peer := fmt.Sprintf("next hop %s(%s)", nextHop, model.MAC(top.mac))
	if pol != bonding.PolicyLayer2 {
		peer = fmt.Sprintf("%s -> %s via %s", top.src, top.dst, model.MAC(top.mac))
	}
	f := Finding{ID: IDHashPolicy, Severity: Warning, Slaves: on}
	f.Message = fmt.Sprintf("%s: %s of the flows (by %s) go to one %s, so they all take %s", pol, pct(share), mix.weighting, peer, strings.Join(on, ", "))
	var d strings.Builder
	if pol == bonding.PolicyLayer2 {
		d.WriteString("layer2 hashes only the MAC addresses of the frame: every flow to the same next hop — a gateway, a router, one NFS or backup server — takes the same slave, whatever its addresses and ports.")
	} else {
		fmt.Fprintf(&d, "%s hashes the MAC and IP addresses: every flow between the same two hosts takes the same slave, whatever its ports.", pol)
	}
	d.WriteString(" layer3+4 adds the ports, so many connections to one peer spread over the slaves.")
	if wt := v.whatIf; wt != nil {
		l34 := &wt.Policies[bonding.PolicyLayer34]
		if l34.predictable() {
			fmt.Fprintf(&d, " With layer3+4 these flows would split %s (now %s).", l34.Split(), wt.Policies[wt.Current].Split())
		}
	}
	fmt.Fprintf(&d, " To change: echo layer3+4 > /sys/class/net/%s/bonding/xmit_hash_policy (at once, no restart) and in the persistent configuration. Packets of one flow stay on one slave, so nothing is reordered; only IP fragments, which carry no ports, may take another slave than the flow's other packets.", v.now.Name)
	f.Detail = d.String()
	return []Finding{f}
}

func lessKey(a, b peerKey) bool {
	if a.srcMAC != b.srcMAC {
		return string(a.srcMAC[:]) < string(b.srcMAC[:])
	}
	if a.mac != b.mac {
		return string(a.mac[:]) < string(b.mac[:])
	}
	if a.src != b.src {
		return a.src.Less(b.src)
	}
	return a.dst.Less(b.dst)
}

// fewFlows: N flows over M slaves cannot spread evenly, and one flow never
// goes faster than one slave.
func (v *view) fewFlows(mix *txMix) []Finding {
	sum, sq := 0.0, 0.0
	heaviest := -1
	for i := range mix.flows {
		f := &mix.flows[i]
		if f.choice.Outcome != bonding.Hashed {
			continue
		}
		sum += f.weight
		sq += f.weight * f.weight
		if f.weight > 0 && (heaviest < 0 || f.weight > mix.flows[heaviest].weight) {
			heaviest = i
		}
	}
	if sum <= 0 {
		return nil
	}
	// The effective number of flows: 1/Σ(share²); ten flows of which one
	// carries nearly everything count as about one.
	nEff := sum * sum / sq
	n := max(1, int(math.Round(nEff)))
	m := len(v.usable)
	if n >= 4*m {
		return nil // spread well enough (ExpectedLargestShare is below the bar from here on)
	}
	expected := ExpectedLargestShare(n, m)
	if nEff >= float64(m) && expected < 1/float64(m)+(1-1/float64(m))/3 {
		return nil
	}
	f := Finding{ID: IDFewFlows, Severity: Info, Slaves: []string{}}
	if nEff < float64(m) {
		f.Severity = Warning
	}
	rated := mix.weighting != "flow count"
	count := "flow"
	if rated {
		count = "busy flow"
	}
	if n != 1 {
		count += "s"
	}
	f.Message = fmt.Sprintf("%d %s over %d slaves: expect the busiest slave to carry about %s", n, count, m, pct(expected))
	var ceiling string
	if heaviest >= 0 {
		hf := &mix.flows[heaviest]
		if sl := slaveOf(v.now, hf.choice.Slave); sl != nil && sl.SpeedMbps != nil && *sl.SpeedMbps > 0 {
			ceiling = units.Speed(*sl.SpeedMbps)
			f.Message += "; one flow tops out at " + ceiling
			if rated && hf.txBps >= 0.8*float64(*sl.SpeedMbps)*1e6 {
				f.Severity = Warning
				f.Slaves = []string{hf.choice.Slave}
				f.Message = fmt.Sprintf("%s -> %s moves %s, at the %s ceiling of one slave (%s); %d %s over %d slaves", hf.src, hf.dst, units.Bits(hf.txBps), ceiling, hf.choice.Slave, n, count, m)
			}
		}
	}
	var d strings.Builder
	fmt.Fprintf(&d, "The bond keeps every packet of a flow on one slave (so TCP sees no reordering): %d flows can use at most %d slaves, and the hash places them at random, so with %d flows over %d slaves the busiest slave carries %s on average, not %s.",
		n, min(n, m), n, m, pct(expected), pct(1/float64(m)))
	switch {
	case mix.measured:
		fmt.Fprintf(&d, " %d flows leave through the bond (measured on its slaves), but by their rates they count as %.1f.", len(mix.flows), nEff)
	case rated:
		fmt.Fprintf(&d, " %d sockets cross the bond, but by their rates they count as %.1f.", mix.sockets, nEff)
	}
	if ceiling != "" {
		fmt.Fprintf(&d, " A single flow never goes faster than one slave (%s): more slaves add capacity for more flows, not for one.", ceiling)
	}
	d.WriteString(" To use the bond's width: run several streams (iperf3 -P, NFS nconnect, parallel rsync or backup jobs, several TCP sessions), or move to faster links. balance-rr spreads one flow over every slave but reorders its packets.")
	f.Detail = d.String()
	return []Finding{f}
}

// ExpectedLargestShare is the expected share of the busiest of m slaves
// when n equal flows are hashed onto them uniformly at random:
// E[max load]/n, computed exactly as Σ_k P(max ≥ k) with the
// exponential generating function of the bounded occupancies.
func ExpectedLargestShare(n, m int) float64 {
	if n <= 0 || m <= 0 {
		return 0
	}
	if m == 1 {
		return 1
	}
	if n > 200 {
		n = 200 // past this the share is within a hair of 1/m
	}
	// P(every slave holds < k flows) = n!/m^n [x^n] (Σ_{j<k} x^j/j!)^m.
	logFact := make([]float64, n+1)
	for i := 1; i <= n; i++ {
		logFact[i] = logFact[i-1] + math.Log(float64(i))
	}
	expMax := 0.0
	for k := 1; k <= n; k++ {
		// Coefficients scaled by n!/m^n as we go, in floating point.
		base := make([]float64, min(k, n+1))
		for j := range base {
			base[j] = math.Exp(-logFact[j])
		}
		poly := []float64{1}
		for range m {
			next := make([]float64, min(len(poly)+len(base)-1, n+1))
			for i, a := range poly {
				if a == 0 {
					continue
				}
				for j, b := range base {
					if i+j > n {
						break
					}
					next[i+j] += a * b
				}
			}
			poly = next
		}
		pBelow := 0.0
		if n < len(poly) {
			pBelow = poly[n] * math.Exp(logFact[n]-float64(n)*math.Log(float64(m)))
		}
		expMax += 1 - pBelow
	}
	return expMax / float64(n)
}
