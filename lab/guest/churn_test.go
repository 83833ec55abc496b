//go:build linux

package guest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/model"
)

// TestChurn: while traffic flows and bondtop samples every 100 ms, a slave
// is released and enslaved again, then the bond is deleted. bondtop must
// keep running, report each change as an event and never show a negative
// or absurd rate (a re-enslaved slave's counters may go back).
func TestChurn(t *testing.T) {
	p := NewPair(t, 60, 3)
	spec := BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer3+4"}
	p.Root.Bond(t, p.Bond, spec, p.Slaves...)
	p.Peer.Bond(t, "pbond0", spec, p.Far...)
	p.Root.Addr(t, p.Bond, p.LocalCIDR())
	p.Peer.Addr(t, "pbond0", p.RemoteCIDR())

	bt := NewBondtop(t, 100*time.Millisecond)
	w := bt.Watch(t)
	// Two streams: enough to move counters, not so many that the emulated
	// CPUs leave the sampler no time.
	tr := StartTCP(t, p.Peer, p.Local, p.Remote, 2, 44000)
	time.Sleep(time.Second)

	released := time.Now()
	p.Root.Release(t, "dut1")
	if slaves := Sysfs(t, p.Bond, "bonding/slaves"); strings.Contains(slaves, "dut1") {
		t.Fatalf("kernel still lists dut1: %s", slaves)
	}
	ev := w.WaitEvent(t, 10*time.Second, "slave_removed dut1", func(e model.Event) bool {
		return e.Kind == model.EventSlaveRemoved && e.Slave == "dut1"
	})
	Measure(t, "churn_event_lag[release->slave_removed]", float64(ev.Time.Sub(released).Milliseconds()), "ms")
	time.Sleep(time.Second)

	p.Root.Enslave(t, p.Bond, "dut1")
	if slaves := Sysfs(t, p.Bond, "bonding/slaves"); !strings.HasSuffix(slaves, "dut1") {
		t.Fatalf("kernel slaves after re-enslaving: %s, want dut1 last", slaves)
	}
	w.WaitEvent(t, 10*time.Second, "slave_added dut1", func(e model.Event) bool {
		return e.Kind == model.EventSlaveAdded && e.Slave == "dut1"
	})
	time.Sleep(time.Second)
	snaps := w.Snapshots()
	if b := snaps[len(snaps)-1].Bond(p.Bond); b != nil {
		var order []string
		for _, s := range b.Slaves {
			order = append(order, s.Name)
		}
		if !slices.Equal(order, []string{"dut0", "dut2", "dut1"}) {
			t.Errorf("bondtop slave order %v, kernel dut0 dut2 dut1", order)
		}
	}

	p.Root.Delete(t, p.Bond)
	if masters := Sysfs(t, "", "bonding_masters"); strings.Contains(masters, p.Bond) {
		t.Fatalf("kernel still lists %s: %q", p.Bond, masters)
	}
	w.WaitEvent(t, 10*time.Second, "bond_gone bond0", func(e model.Event) bool {
		return e.Kind == model.EventBondGone && e.Bond == p.Bond
	})
	time.Sleep(500 * time.Millisecond)
	tr.Stop() // the streams broke with the bond; their errors do not matter

	// ifdown/ifup with a new mode: the same name comes back as another
	// link. Once after bondtop saw the bond go, once between two ticks,
	// while the sampler still holds the old bond's procfs file open.
	// bondtop must show the new bond, and its procfs file must read.
	recreate := func(spec BondSpec, active string) {
		t.Helper()
		recreated := time.Now()
		p.Root.Bond(t, p.Bond, spec, p.Slaves...)
		want := fmt.Sprintf("mode %s, active %s, 3 slaves, warnings []", spec.Mode, active)
		Eventually(t, 10*time.Second, "bondtop showing the re-created bond ("+want+")", func() (bool, string) {
			snaps := w.Snapshots()
			s := snaps[len(snaps)-1]
			b := s.Bond(p.Bond)
			if b == nil {
				return false, "no " + p.Bond
			}
			seen := fmt.Sprintf("mode %s, active %s, %d slaves, warnings %q", Show(b.Mode), Show(b.ActiveSlave), len(b.Slaves), s.Warnings)
			return s.Time.After(recreated.Add(200*time.Millisecond)) && seen == want, seen
		})
	}
	recreate(BondSpec{Mode: "active-backup", Primary: "dut2"}, "dut2")
	p.Root.Delete(t, p.Bond)
	recreate(BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer2"}, "null")
	if err := w.Stop(); err != nil {
		t.Errorf("bondtop's sampler stopped with %v", err)
	}

	// No negative or absurd rate in any snapshot of the run.
	const limit = 100e9 // bit/s: far above what a veth carries in the VM
	all := w.Snapshots()
	// trafficOf is the traffic of bond (slave "") or of one of its
	// slaves in s; nil when s has neither.
	trafficOf := func(s *model.Snapshot, bond, slave string) *model.Traffic {
		b := s.Bond(bond)
		switch {
		case b == nil:
			return nil
		case slave == "":
			return &b.Traffic
		}
		for j := range b.Slaves {
			if b.Slaves[j].Name == slave {
				return &b.Slaves[j].Traffic
			}
		}
		return nil
	}
	// check names the interval and the totals on both sides of it, so a
	// failure says whether the counters jumped or the interval shrank.
	check := func(i int, bond, slave string) {
		tr := trafficOf(all[i], bond, slave)
		for _, r := range []*float64{tr.RxBps, tr.TxBps, tr.RxPps, tr.TxPps} {
			if r != nil && (*r < 0 || *r > limit) {
				before := "none"
				if i > 0 {
					if p := trafficOf(all[i-1], bond, slave); p != nil {
						before = totalsText(p.Totals)
					}
				}
				where := bond
				if slave != "" {
					where += "/" + slave
				}
				t.Errorf("%s at %s: rate %g over %.4f s; totals before %s, after %s",
					where, all[i].Time.Format("15:04:05.000"), *r, all[i].IntervalSeconds, before, totalsText(tr.Totals))
			}
		}
	}
	for i, s := range all {
		for _, b := range s.Bonds {
			check(i, b.Name, "")
			for _, sl := range b.Slaves {
				check(i, b.Name, sl.Name)
			}
		}
	}
	t.Logf("%d snapshots; bondtop events:%s", len(all), FormatEvents(w.Events()))
}

// totalsText is the byte and packet totals, for a failure message.
func totalsText(t model.Totals) string {
	return fmt.Sprintf("rx %s B %s p, tx %s B %s p", Show(t.RxBytes), Show(t.RxPackets), Show(t.TxBytes), Show(t.TxPackets))
}
