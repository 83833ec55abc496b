package collector

import (
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
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
	tr := newFlowTracker(&staticFlows{sockets: collectortest.ManySockets(10_000)}, time.Nanosecond)
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
