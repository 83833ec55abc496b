package collector

import (
	"net/netip"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// staticFlows is a FlowReader that returns the same sockets, their byte
// counts advancing.
type staticFlows struct {
	sockets []model.Socket
}

func (s *staticFlows) ReadFlows() (FlowReading, error) {
	out := make([]model.Socket, len(s.sockets))
	for i := range s.sockets {
		s.sockets[i].TxBytes += uint64(1000 * (i%7 + 1))
		out[i] = s.sockets[i]
	}
	return FlowReading{Sockets: out, Kernel: bonding.KernelVersion{Major: 6, Minor: 12}}, nil
}

func manySockets(n int) []model.Socket {
	out := make([]model.Socket, n)
	for i := range out {
		out[i] = model.Socket{ID: uint64(i + 1), Proto: bonding.ProtoTCP, State: "established",
			Local:     netip.AddrPortFrom(netip.MustParseAddr("10.0.0.1"), uint16(10000+i%50000)),
			Remote:    netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 443),
			HaveBytes: true, TxBytes: uint64(i) * 1000,
			Path: model.Path{Dev: "bond0", Bond: "bond0", SrcMAC: [6]byte{2, 0, 0, 0, 0, 1}, DstMAC: [6]byte{2, 0, 0, 0, 0, byte(i)}, HaveDstMAC: true}}
	}
	return out
}

func benchBond() bonding.Bond {
	b := bonding.Bond{Name: "bond0", Mode: new(bonding.Mode8023AD), XmitHashPolicy: new("layer3+4"), MIIStatus: new("up")}
	for _, s := range []string{"eth0", "eth1", "eth2", "eth3"} {
		b.Slaves = append(b.Slaves, bonding.Slave{Name: s, MIIStatus: new("up"), State: new("active")})
	}
	return b
}

// BenchmarkFlowRefresh10k is the flow table's share of a refresh with ten
// thousand sockets: rates from the byte counts and a prediction per
// socket, summed per slave (the socket dump itself is
// BenchmarkLiveFlowsRead10k).
func BenchmarkFlowRefresh10k(b *testing.B) {
	tr := newFlowTracker(&staticFlows{sockets: manySockets(10_000)}, time.Nanosecond)
	bond := benchBond()
	now := time.Unix(0, 0)
	snap := &model.Snapshot{Bonds: []model.BondSample{{Bond: bond}}}
	snap.Bonds[0].Slaves = make([]model.SlaveSample, 4)
	for i := range bond.Slaves {
		snap.Bonds[0].Slaves[i].Slave = bond.Slaves[i]
	}
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(3 * time.Second)
		tr.attach(now, snap, []bonding.Bond{bond}, &lentSnapshot{nSlaves: len(bond.Slaves)})
	}
	if tab := snap.Bonds[0].Flows; tab == nil || len(tab.Flows) != 10_000 || tab.Unpredictable != 0 {
		b.Fatalf("table %+v", tab)
	}
}
