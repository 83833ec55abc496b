package demo

import (
	"math"
	"net/netip"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
)

var _ collector.FlowReader = (*Source)(nil)

// ReadFlows gives the simulated host's sockets: the streams the demo
// places on its slaves, with the bytes each moved so far, as of the last
// Read.
func (d *Source) ReadFlows() (collector.FlowReading, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fr := collector.FlowReading{Kernel: d.kernel}
	for bi, sb := range d.bonds {
		for i := range sb.flows {
			f := &sb.flows[i]
			if f.forwarded {
				continue // a VM's socket, not this host's
			}
			// Peers off the host's /24 are reached through its gateway,
			// .1 (whose MAC the demo gives those flows).
			nextHop := f.flow.Dst
			if p, err := f.flow.Src.Prefix(24); err == nil && !p.Contains(f.flow.Dst) {
				nextHop = p.Addr().Next()
			}
			fr.Sockets = append(fr.Sockets, model.Socket{
				ID:    uint64(bi)<<32 | uint64(i+1),
				Proto: f.flow.Proto, State: "established",
				Local:     netip.AddrPortFrom(f.flow.Src, f.flow.SrcPort),
				Remote:    netip.AddrPortFrom(f.flow.Dst, f.flow.DstPort),
				HaveBytes: true, TxBytes: uint64(math.Floor(f.sent)), RxBytes: uint64(math.Floor(f.received)),
				Path: model.Path{Dev: sb.name, Bond: sb.name, SrcMAC: sb.mac, DstMAC: f.flow.DstMAC, HaveDstMAC: true, NextHop: nextHop},
			})
		}
	}
	return fr, nil
}
