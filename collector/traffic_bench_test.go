package collector

import (
	"math/rand/v2"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/model"
)

// manyMeterFlows is n flows spread over benchBond's slaves, both
// directions, with counters that grow by a different amount per flow.
func manyMeterFlows(n int) []flowmeter.Flow {
	out := make([]flowmeter.Flow, n)
	names := []string{"eth0", "eth1", "eth2", "eth3"}
	for i := range out {
		f := &out[i]
		f.Slave = names[i%4]
		f.Ifindex = 10 + i%4
		f.Direction = flowmeter.Direction(i / 4 % 2)
		f.EtherType, f.Proto = 0x0800, bonding.ProtoTCP
		f.Src = netip.AddrFrom4([4]byte{10, 0, byte(i >> 16), byte(i >> 8)})
		f.Dst = netip.AddrFrom4([4]byte{10, 1, 0, byte(i)})
		f.SrcPort, f.DstPort = uint16(10000+i%50000), 443
		f.SrcMAC, f.DstMAC = [6]byte{2, 0, 0, 0, 0, 1}, [6]byte{2, 0, 0, 0, 0, byte(i)}
		f.Bytes, f.Packets = uint64(i)*1000, uint64(i)
	}
	return out
}

// benchMeter advances every flow's counters on each Read; shuffled,
// it lists them in a new order each time (the worst case of matching a
// flow with the previous reading).
type benchMeter struct {
	flows    []flowmeter.Flow
	at       time.Time
	shuffled bool
	rng      *rand.Rand
}

func (m *benchMeter) Sync(map[int]string) error { return nil }
func (m *benchMeter) Close() error              { return nil }
func (m *benchMeter) Ifindex(name string) (int, error) {
	return 10 + int(name[3]-'0'), nil
}

// Read advances the counters in place and hands out the same slice. The
// real meter fills a fresh slice per Read (its batch lookup, flowmeter's
// benchmark); here the snapshots the benchmark drops would see the next
// reading's counters, which no one reads.
func (m *benchMeter) Read() (flowmeter.Reading, error) {
	m.at = m.at.Add(time.Second)
	for i := range m.flows {
		m.flows[i].Bytes += uint64(1500 * (i%97 + 1))
		m.flows[i].Packets += uint64(i%97 + 1)
	}
	if m.shuffled {
		m.rng.Shuffle(len(m.flows), func(i, j int) { m.flows[i], m.flows[j] = m.flows[j], m.flows[i] })
	}
	return flowmeter.Reading{Time: m.at, Source: flowmeter.SourceEBPF, SampleRate: 1, Flows: m.flows, MapEntries: len(m.flows), MapSize: 1 << 17}, nil
}

// benchMeasured is the collector's share of a refresh with n metered
// flows: rates from the counters, a prediction per tx flow, the sums and
// the ranking (the meter's batch lookup itself is flowmeter's).
func benchMeasured(b *testing.B, n int, shuffled bool) {
	m := &benchMeter{flows: manyMeterFlows(n), at: time.Unix(0, 0), shuffled: shuffled, rng: rand.New(rand.NewPCG(1, 2))}
	tr := newMeterTracker(m)
	bond := benchBond()
	snap := &model.Snapshot{Bonds: []model.BondSample{{Bond: bond}}}
	snap.Bonds[0].Slaves = make([]model.SlaveSample, 4)
	for i := range bond.Slaves {
		snap.Bonds[0].Slaves[i].Slave = bond.Slaves[i]
	}
	bonds := []bonding.Bond{bond}
	k := bonding.KernelVersion{Major: 6, Minor: 12}
	// A second apart, every refresh reads the meter (DashboardMeterEvery).
	at := time.Unix(0, 0)
	refresh := func() {
		at = at.Add(time.Second)
		mr, fresh := tr.read(at, snap, bonds, DashboardMeterEvery, time.Second)
		if !fresh {
			b.Fatal("a refresh a second apart did not read the meter")
		}
		tr.attach(time.Unix(0, 0), snap, bonds, k, mr)
	}
	refresh()
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		refresh()
	}
	// CPU time beside wall time: on a shared machine waiting for a core
	// is not the refresh's cost.
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	if mt := snap.Bonds[0].Measured; mt == nil || len(mt.Flows) != n || !mt.HaveRates() {
		b.Fatalf("measured %+v", mt)
	}
}

func BenchmarkMeasuredRefresh10k(b *testing.B)          { benchMeasured(b, 10_000, false) }
func BenchmarkMeasuredRefresh100k(b *testing.B)         { benchMeasured(b, 100_000, false) }
func BenchmarkMeasuredRefresh100kShuffled(b *testing.B) { benchMeasured(b, 100_000, true) }

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
