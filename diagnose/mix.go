package diagnose

import (
	"net/netip"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// The transmit mix: the flows the flow findings and the what-if judge,
// each with its weight. It comes from the flow meter when one measured
// the bond (every flow that leaves, forwarded and VM traffic included,
// weighted by its measured rate), else from this host's sockets (the flow
// table, weighted by their payload rate, or counted).

// maxMixFlows bounds the measured mix: the busiest flows carry nearly all
// of the weight, and the what-if hashes each flow under every policy.
const maxMixFlows = 5000

// txMix is the flows of one bond's transmit mix.
type txMix struct {
	flows []mixFlow
	// weighting is "measured tx rate", "tx rate" or "flow count".
	weighting string
	kernel    bonding.KernelVersion
	// measured is set for the meter's mix; sockets counts the flow
	// table's sockets otherwise.
	measured bool
	sockets  int
}

// mixFlow is one flow of a txMix.
type mixFlow struct {
	packet bonding.Flow
	weight float64
	// haveMAC: the next hop's MAC is known (a MAC-hashing policy
	// cannot place the flow otherwise).
	haveMAC bool
	// choice is where the flow goes: the slave it was measured on, or
	// the one the hash predicts for a socket.
	choice bonding.Choice
	// src and dst are the flow's ends as printed; nextHop the socket's
	// route's (invalid for measured flows).
	src, dst netip.AddrPort
	nextHop  netip.Addr
	txBps    float64
}

// mixOf is b's transmit mix; nil without flows.
func mixOf(b *model.BondSample) *txMix {
	if m := b.Measured; m.Metered() && m.HaveRates() {
		if mix := measuredMix(m); len(mix.flows) > 0 {
			return mix
		}
	}
	t := b.Flows
	if t == nil || len(t.Flows) == 0 {
		return nil
	}
	mix := &txMix{kernel: t.Kernel, sockets: len(t.Flows), flows: make([]mixFlow, len(t.Flows))}
	total := 0.0
	for i := range t.Flows {
		f := &t.Flows[i]
		mf := &mix.flows[i]
		*mf = mixFlow{packet: f.Packet(), haveMAC: f.Path.HaveDstMAC, choice: f.Choice,
			src: f.Local, dst: f.Remote, nextHop: f.Path.NextHop}
		if t.HaveRates() && f.HaveRate {
			mf.weight, mf.txBps = f.TxBps, f.TxBps
			total += f.TxBps
		}
	}
	mix.weighting = "tx rate"
	if total <= 0 {
		mix.weighting = "flow count"
		for i := range mix.flows {
			mix.flows[i].weight = 1
		}
	}
	return mix
}

// measuredMix is the meter's tx flows that moved, busiest first (the
// traffic is ranked), at most maxMixFlows.
func measuredMix(m *model.MeasuredTraffic) *txMix {
	mix := &txMix{weighting: "measured tx rate", measured: true, kernel: m.Kernel}
	for i := range m.Flows {
		f := &m.Flows[i]
		if !f.IsTx() || f.Bps <= 0 {
			continue
		}
		if len(mix.flows) == maxMixFlows {
			break
		}
		c := bonding.Choice{Outcome: bonding.Hashed, Slave: f.Slave, Index: -1}
		mix.flows = append(mix.flows, mixFlow{packet: f.Packet(), weight: f.Bps, haveMAC: true, choice: c,
			src: netip.AddrPortFrom(f.Src, f.SrcPort), dst: netip.AddrPortFrom(f.Dst, f.DstPort), txBps: f.Bps})
	}
	return mix
}
