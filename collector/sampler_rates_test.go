package collector

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
)

// TestSamplerNoRateAcrossARecreatedLink: a bond deleted and created again
// between two ticks is another link under the same name. The kernel's
// new bond may count from above the old one's totals (it folds in what
// its slaves move), which the went-back check cannot see: its first
// tick has no rate, the next one does.
func TestSamplerNoRateAcrossARecreatedLink(t *testing.T) {
	counters := func(link, bytes uint64) bonding.Counters {
		var cs bonding.Counters
		cs.SetLink(link)
		cs.Set(bonding.RxBytes, bytes)
		cs.Set(bonding.TxBytes, bytes)
		return cs
	}
	src := &bondSource{bond: xorBond("eth0")}
	src.bond.Counters = counters(7, 1_000)
	src.bond.Slaves[0].Counters = counters(3, 5_000)
	clk := collectortest.NewClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	s := NewSampler(src, Options{Interval: time.Second, Clock: clk.Now})
	collectortest.MustSample(t, s)

	src.bond.Counters = counters(9, 2_000_000_000) // bond0 again, ifindex 9
	src.bond.Slaves[0].Counters = counters(3, 6_000)
	clk.Advance(100 * time.Millisecond)
	b := collectortest.MustSample(t, s).Bond("bond0")
	if b.RxBps != nil || b.TxBps != nil {
		t.Fatalf("a rate across two links: rx %v tx %v bit/s", *b.RxBps, *b.TxBps)
	}
	collectortest.Approx(t, "the slave, the same link throughout", b.Slaves[0].RxBps, 80_000)

	src.bond.Counters = counters(9, 2_000_001_000)
	clk.Advance(100 * time.Millisecond)
	collectortest.Approx(t, "the new bond's second tick", collectortest.MustSample(t, s).Bond("bond0").RxBps, 80_000)
}

// TestSamplerRatesRunBetweenCounterReads: a read that waited after taking
// the counters (the live host's files wait on the kernel's lock while it
// enslaves), then a quick one a notification brought: the snapshots are
// 1.6 ms apart, the counters 101.6 ms. The rate divides by the latter.
func TestSamplerRatesRunBetweenCounterReads(t *testing.T) {
	src := &bondSource{bond: xorBond("eth0")}
	set := func(bytes uint64) {
		src.bond.Counters.Set(bonding.TxBytes, bytes)
		src.bond.Slaves[0].Counters.Set(bonding.TxBytes, bytes)
	}
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	clk := collectortest.NewClock(t0.Add(100 * time.Millisecond)) // the slow read returns
	src.countersAge = 100 * time.Millisecond                      // counters read at t0
	set(1_000_000)
	s := NewSampler(src, Options{Interval: time.Second, Clock: clk.Now})
	collectortest.MustSample(t, s)

	src.countersAge = 0
	set(1_000_000 + 1_270_000) // 100 Mbit/s for 101.6 ms
	clk.Set(t0.Add(101600 * time.Microsecond))
	snap := collectortest.MustSample(t, s)
	collectortest.Approx(t, "bond tx", snap.Bond("bond0").TxBps, 100e6)
	collectortest.Approx(t, "eth0 tx", snap.Bond("bond0").Slaves[0].TxBps, 100e6)
	if math.Abs(snap.IntervalSeconds-0.1016) > 1e-9 {
		t.Errorf("interval %v s, want the counters' 0.1016", snap.IntervalSeconds)
	}
}

// readingSource hands out the Reading a test sets (its bonds copied).
type readingSource struct{ r Reading }

func (s *readingSource) Read() (Reading, error) {
	r := s.r
	r.Bonds = slices.Clone(s.r.Bonds)
	for i := range r.Bonds {
		r.Bonds[i].Slaves = slices.Clone(r.Bonds[i].Slaves)
	}
	return r, nil
}
func (s *readingSource) Close() error { return nil }

// TestSamplerRatesRunBetweenEachInterfacesReads: a reading whose second
// part came late (Open vSwitch's bonds, read after the kernel's dump, on a
// host where ovs-vswitchd was slow to answer once). The kernel's bond
// moved 1 MB in the 1 s between its counters, the OVS bond 1.3 MB in the
// 1.3 s between its own: both run at 8 Mbit/s, though the snapshots are
// 1.3 s apart and the reading's counters (the kernel's) 1 s.
func TestSamplerRatesRunBetweenEachInterfacesReads(t *testing.T) {
	set := func(b *bonding.Bond, bytes uint64, age time.Duration, aged bool) {
		b.Counters.Set(bonding.TxBytes, bytes)
		b.Slaves[0].Counters.Set(bonding.TxBytes, bytes)
		if aged {
			b.Counters.SetAge(age)
			b.Slaves[0].Counters.SetAge(age)
		}
	}
	linux, ovs := xorBond("eth0"), xorBond("eth1")
	ovs.Name, ovs.Kind = "bond-ovs", bonding.KindOVS
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	clk := collectortest.NewClock(t0)
	set(&linux, 1_000_000, 0, false)
	set(&ovs, 1_000_000, 0, true)
	src := &readingSource{r: Reading{Bonds: []bonding.Bond{ovs, linux}}}
	s := NewSampler(src, Options{Interval: time.Second, Clock: clk.Now})
	collectortest.MustSample(t, s)

	// The kernel's counters at t0+1 s, OVS's when the Read returned, 300 ms later.
	clk.Set(t0.Add(1300 * time.Millisecond))
	linux, ovs = src.r.Bonds[1], src.r.Bonds[0]
	set(&linux, 2_000_000, 0, false)
	set(&ovs, 2_300_000, 0, true)
	src.r = Reading{Bonds: []bonding.Bond{ovs, linux}, CountersAge: 300 * time.Millisecond}
	snap := collectortest.MustSample(t, s)
	for _, name := range []string{"bond0", "bond-ovs"} {
		b := snap.Bond(name)
		collectortest.Approx(t, name+" tx", b.TxBps, 8e6)
		collectortest.Approx(t, name+" slave tx", b.Slaves[0].TxBps, 8e6)
	}
	if math.Abs(snap.IntervalSeconds-1) > 1e-9 {
		t.Errorf("interval %v s, want the kernel's counters' 1 s", snap.IntervalSeconds)
	}
}
