package diagnose

import (
	"fmt"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/units"
)

// Shares are one direction's per-slave traffic over the window.
type Shares struct {
	// Bytes per slave, in enslave order (the bond's Slaves).
	Slaves []string
	Bytes  []float64
	// Seconds of rates they cover.
	Seconds float64
	// Score is 0 when the bytes spread evenly over the usable slaves and 1
	// when one slave carries everything: (largest share - 1/n) / (1 - 1/n)
	// over n usable slaves.
	Score   float64
	Largest int // index of the busiest slave; -1 when nothing moved
}

// Total is the bytes of every slave.
func (s *Shares) Total() float64 {
	t := 0.0
	for _, b := range s.Bytes {
		t += b
	}
	return t
}

// Share is slave i's part of the total (0 when nothing moved).
func (s *Shares) Share(i int) float64 {
	if t := s.Total(); t > 0 {
		return s.Bytes[i] / t
	}
	return 0
}

// score sets Largest and Score from Bytes (total is their sum) over
// usable slaves.
func (s *Shares) score(total float64, usable int) {
	if total <= 0 {
		return
	}
	for i := range s.Bytes {
		if s.Largest < 0 || s.Bytes[i] > s.Bytes[s.Largest] {
			s.Largest = i
		}
	}
	if usable >= 2 {
		n := float64(usable)
		s.Score = min(1, max(0, (s.Bytes[s.Largest]/total-1/n)/(1-1/n)))
	}
}

// imbalance: in the balancing modes, one slave carrying most of a
// direction's bytes over the window.
func (v *view) imbalance() []Finding {
	var out []Finding
	mode := v.mode()
	for _, tx := range []bool{true, false} {
		switch mode {
		case bonding.ModeXOR, bonding.Mode8023AD, bonding.ModeALB:
		case bonding.ModeRoundRobin, bonding.ModeTLB:
			// Receive is not balanced by these modes (the switch's, or
			// the active slave's): only transmit counts.
			if !tx {
				continue
			}
		default:
			continue
		}
		if len(v.usable) < 2 {
			continue
		}
		if f, ok := v.imbalanceDir(tx); ok {
			out = append(out, f)
		}
	}
	return out
}

func (v *view) imbalanceDir(tx bool) (Finding, bool) {
	s := v.win.shares(v.now, tx)
	if s.Largest < 0 || s.Seconds <= 0 || s.Score < 0.4 {
		return Finding{}, false
	}
	avgBps := s.Total() * 8 / s.Seconds
	// A trickle is uneven by nature (LACPDUs, ARP): judge only traffic
	// worth balancing, a megabit or 1% of the slowest slave.
	floor := 1e6
	for i := range v.now.Slaves {
		if sp := v.now.Slaves[i].SpeedMbps; sp != nil && *sp > 0 && float64(*sp)*1e6/100 > floor {
			floor = float64(*sp) * 1e6 / 100
		}
	}
	if avgBps < floor {
		return Finding{}, false
	}
	dir, id := "rx", IDImbalanceRx
	if tx {
		dir, id = "tx", IDImbalanceTx
	}
	busiest := s.Slaves[s.Largest]
	f := Finding{ID: id, Slaves: []string{busiest}}
	f.Message = fmt.Sprintf("%s %s on %s of %d usable slaves (imbalance %.2f over %.0f s)", dir, pct(s.Share(s.Largest)), busiest, len(v.usable), s.Score, s.Seconds)
	busyBps := s.Bytes[s.Largest] * 8 / s.Seconds
	saturated := false
	if sl := slaveOf(v.now, busiest); sl != nil && sl.SpeedMbps != nil && *sl.SpeedMbps > 0 {
		saturated = busyBps >= 0.8*float64(*sl.SpeedMbps)*1e6
	}
	switch {
	case saturated && s.Score >= 0.5:
		f.Severity = Critical
	case s.Score >= 0.6:
		f.Severity = Warning
	default:
		f.Severity = Info
	}
	var parts []string
	for i, name := range s.Slaves {
		parts = append(parts, fmt.Sprintf("%s %s (%s)", name, pct(s.Share(i)), units.Bits(s.Bytes[i]*8/s.Seconds)))
	}
	var d strings.Builder
	fmt.Fprintf(&d, "%s over the last %.0f s: %s.", strings.ToUpper(dir), s.Seconds, strings.Join(parts, ", "))
	if saturated {
		fmt.Fprintf(&d, " %s runs at %s, near its speed, while other slaves idle: the bond is capped at one link.", busiest, units.Bits(busyBps))
	}
	if tx {
		fmt.Fprintf(&d, " This host picks the transmit slave per flow (mode %s", v.mode())
		if p := v.policy(); p != "" && v.hashes() {
			fmt.Fprintf(&d, ", xmit_hash_policy %s", p)
		}
		d.WriteString("): all packets of a flow take one slave, so a few big flows, or flows that the policy cannot tell apart, pile up.")
		if v.now.Flows == nil {
			d.WriteString(" The flow table (this host's sockets) tells which: run bondtop live on the host.")
		} else {
			d.WriteString(" See the flow findings (hash policy, too few flows, what-if) for which.")
		}
	} else {
		d.WriteString(" The switch (the LACP partner) picks the slave for traffic to this host with its own hash: set its port-channel load balancing to hash addresses and ports (Cisco: port-channel load-balance src-dst-mixed-ip-port; Juniper: hash-key layer-3/layer-4). The bond cannot change it.")
	}
	f.Detail = d.String()
	return f, true
}
