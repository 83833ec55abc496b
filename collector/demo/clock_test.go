package demo

import (
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
)

// demoCountersAt reads a demo source once and returns every interface's
// counters and link failure count by name.
func demoCountersAt(t *testing.T, d *Source) (map[string]bonding.Counters, map[string]int) {
	t.Helper()
	r, err := d.Read()
	if err != nil {
		t.Fatal(err)
	}
	counters, failures := map[string]bonding.Counters{}, map[string]int{}
	for _, b := range r.Bonds {
		counters[b.Name] = b.Counters
		for _, s := range b.Slaves {
			counters[s.Name] = s.Counters
			if s.LinkFailureCount != nil { // an OVS member has none
				failures[s.Name] = *s.LinkFailureCount
			}
		}
	}
	return counters, failures
}

// A demo stopped and started again continues its counters: every counter
// of the new run's first reading is at least the old run's last, the
// bytes between them are no more than the links could carry in the gap,
// and a demo started at the same moment as a running one reads the same.
func TestDemoCountersSurviveRestart(t *testing.T) {
	// Not on a whole five minutes, and through every incident.
	now := time.Date(2026, 12, 2, 12, 3, 17, 300_000_000, time.UTC)
	clock := func() time.Time { return now }
	first := New(clock)
	var last map[string]bonding.Counters
	var lastFailures map[string]int
	for range 700 { // 350 s at 0.5 s: longer than a script
		prev := last
		last, lastFailures = demoCountersAt(t, first)
		for name, cs := range prev {
			for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
				a, _ := cs.Get(c)
				now := last[name]
				b, _ := now.Get(c)
				if b < a {
					t.Fatalf("%s counter %d went back within a run: %d -> %d", name, c, a, b)
				}
			}
		}
		now = now.Add(500 * time.Millisecond)
	}
	stopped := now.Add(-500 * time.Millisecond)

	// The same moment from a fresh start: the same counters.
	now = stopped
	same, sameFailures := demoCountersAt(t, New(clock))
	for name, cs := range last {
		for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
			a, _ := cs.Get(c)
			fresh := same[name]
			b, _ := fresh.Get(c)
			if diff := int64(b) - int64(a); diff < -1 || diff > 1 {
				t.Errorf("%s counter %d: %d in a running demo, %d in one started then", name, c, a, b)
			}
		}
		if name != "bond0" && name != "bond1" && sameFailures[name] != lastFailures[name] {
			t.Errorf("%s link failures: %d running, %d restarted", name, lastFailures[name], sameFailures[name])
		}
	}

	// Restarted 7 s later.
	const gap = 7
	now = stopped.Add(gap * time.Second)
	after, afterFailures := demoCountersAt(t, New(clock))
	for name, cs := range last {
		later := after[name]
		for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
			a, _ := cs.Get(c)
			b, _ := later.Get(c)
			if b < a {
				t.Errorf("%s counter %d went back over a restart: %d -> %d", name, c, a, b)
			}
		}
		tx0, _ := cs.Get(bonding.TxBytes)
		tx1, _ := later.Get(bonding.TxBytes)
		// 4 x 10G is the most any interface of the demo carries.
		if bps := float64(tx1-tx0) * 8 / gap; bps > 40e9 {
			t.Errorf("%s sent %.3g bit/s over the restart", name, bps)
		}
		if afterFailures[name] < lastFailures[name] {
			t.Errorf("%s link failures went back over a restart: %d -> %d", name, lastFailures[name], afterFailures[name])
		}
	}
}

// The long incidents happen at the script's fixed times of the wall
// clock, whenever the demo started.
func TestDemoLongIncidents(t *testing.T) {
	at := func(phase time.Duration) *collector.Reading {
		now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC).Add(phase)
		r, err := New(func() time.Time { return now }).Read()
		if err != nil {
			t.Fatal(err)
		}
		return &r
	}
	slave := func(r *collector.Reading, bond, name string) *bonding.Slave {
		for i, s := range r.Bond(bond).Slaves {
			if s.Name == name {
				return &r.Bond(bond).Slaves[i]
			}
		}
		t.Fatalf("no %s in %s", name, bond)
		return nil
	}
	r := at(200 * time.Second)
	if s := slave(r, "bond0", "ens2f1"); *s.Partner.SystemMAC != "00:00:00:00:00:00" || *s.MIIStatus != "up" {
		t.Errorf("ens2f1 at 200 s: partner %s, mii %s; want no partner, with link", *s.Partner.SystemMAC, *s.MIIStatus)
	}
	if s := slave(r, "bond1", "eno2"); *s.MIIStatus != "down" {
		t.Errorf("eno2 at 200 s: %s, want down", *s.MIIStatus)
	}
	if s := slave(at(10*time.Second), "bond1", "eno2"); *s.MIIStatus != "up" {
		t.Errorf("eno2 at 10 s: %s, want up", *s.MIIStatus)
	}
	// ens1f1 at 150-270 s is down 20 s of every 30.
	if s := slave(at(155*time.Second), "bond0", "ens1f1"); *s.MIIStatus != "down" {
		t.Errorf("ens1f1 at 155 s: %s", *s.MIIStatus)
	}
	if s := slave(at(175*time.Second), "bond0", "ens1f1"); *s.MIIStatus != "up" {
		t.Errorf("ens1f1 at 175 s: %s", *s.MIIStatus)
	}
}

// BenchmarkDemoClock: the one-off cost a demo pays at its start to
// simulate one script a second at a time.
func BenchmarkDemoClock(b *testing.B) {
	for b.Loop() {
		newDemoClock()
	}
}
