//go:build linux

package guest

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/bondtop/bondtop/model"
)

// activeWatch records the kernel's own notifications of a bond's active
// slave, with the time each arrived.
type activeWatch struct {
	mu      sync.Mutex
	changes []activeChange
}

type activeChange struct {
	at    time.Time
	index int // ifindex of the new active slave
}

func watchActive(t *testing.T, bond string) *activeWatch {
	updates, done := make(chan netlink.LinkUpdate, 256), make(chan struct{})
	if err := netlink.LinkSubscribe(updates, done); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(done) })
	aw := &activeWatch{}
	go func() {
		last := -1
		for u := range updates {
			if b, ok := u.Link.(*netlink.Bond); ok && b.Name == bond && b.ActiveSlave != last {
				last = b.ActiveSlave
				aw.mu.Lock()
				aw.changes = append(aw.changes, activeChange{time.Now(), b.ActiveSlave})
				aw.mu.Unlock()
			}
		}
	}()
	return aw
}

// after returns when the kernel first named index active after t0.
func (aw *activeWatch) after(t *testing.T, t0 time.Time, index int) time.Time {
	t.Helper()
	var at time.Time
	Eventually(t, 5*time.Second, "kernel notification of the new active slave", func() (bool, string) {
		aw.mu.Lock()
		defer aw.mu.Unlock()
		for _, c := range aw.changes {
			if c.index == index && c.at.After(t0) {
				at = c.at
				return true, ""
			}
		}
		return false, fmt.Sprint(aw.changes)
	})
	return at
}

// TestActiveBackupFailover: active-backup with primary dut0 and miimon
// 100. Twice, the active slave's far end goes down (carrier loss) and comes
// back: the kernel fails over to dut1, counts a link failure, and fails
// back to the primary. bondtop must report each failover naming both
// slaves. Its latency, from the carrier change to bondtop's event, is the
// kernel's (up to miimon = 100 ms until its MII poll sees the carrier)
// plus bondtop's; over the four failovers the median must stay under
// 200 ms, i.e. bondtop's share under 100 ms. The kernel's own notification,
// as a test goroutine receives it, is logged beside it; that goroutine
// competes for the emulated CPUs like bondtop, so the lag between the two
// can come out negative.
func TestActiveBackupFailover(t *testing.T) {
	p := NewPair(t, 30, 2)
	p.Root.Bond(t, p.Bond, BondSpec{Mode: "active-backup", Primary: "dut0"}, p.Slaves...)
	p.Peer.Bond(t, "pbond0", BondSpec{Mode: "active-backup"}, p.Far...)
	p.Root.Addr(t, p.Bond, p.LocalCIDR())
	p.Peer.Addr(t, "pbond0", p.RemoteCIDR())
	Eventually(t, 10*time.Second, "dut0 active", func() (bool, string) {
		a := Sysfs(t, p.Bond, "bonding/active_slave")
		return a == "dut0", a
	})
	failures0, _ := strconv.Atoi(ProcSlave(t, p.Bond, "dut0")["Link Failure Count"])
	index := map[string]int{"dut0": p.Root.Link(t, "dut0").Attrs().Index, "dut1": p.Root.Link(t, "dut1").Attrs().Index}
	aw := watchActive(t, p.Bond)

	// bondtop at its default pace (1 s): only its link notifications can
	// make the event fast.
	bt := NewBondtop(t, time.Second, p.Bond)
	w := bt.Watch(t)
	time.Sleep(1500 * time.Millisecond)

	var lags, totals []float64
	failover := func(cycle int, from, to string, change func()) {
		t0 := time.Now()
		change()
		ev := w.WaitEvent(t, 5*time.Second, fmt.Sprintf("failover %s -> %s", from, to), func(e model.Event) bool {
			return e.Kind == model.EventFailover && e.Bond == p.Bond && e.Time.After(t0)
		})
		if ev.Old != from || ev.New != to {
			t.Errorf("bondtop failover %q -> %q, want %s -> %s (%s)", ev.Old, ev.New, from, to, ev.Message)
		}
		kernel := aw.after(t, t0, index[to])
		kernelMs := float64(kernel.Sub(t0).Microseconds()) / 1000
		eventMs := float64(ev.Time.Sub(t0).Microseconds()) / 1000
		t.Logf("cycle %d, %s -> %s: kernel notified %.1f ms after the carrier change, bondtop's event %.1f ms (lag %.1f ms)",
			cycle, from, to, kernelMs, eventMs, eventMs-kernelMs)
		lags = append(lags, eventMs-kernelMs)
		totals = append(totals, eventMs)
		if a := Sysfs(t, p.Bond, "bonding/active_slave"); a != to {
			t.Errorf("kernel active slave %s, want %s", a, to)
		}
	}
	for cycle := 1; cycle <= 2; cycle++ {
		failover(cycle, "dut0", "dut1", func() { p.Peer.Down(t, "far0") }) // dut0 loses carrier

		// The kernel counted the failure; bondtop shows the same.
		failures, _ := strconv.Atoi(ProcSlave(t, p.Bond, "dut0")["Link Failure Count"])
		if failures != failures0+cycle {
			t.Errorf("kernel link failure count %d, want %d", failures, failures0+cycle)
		}
		if nl := p.Root.SlaveInfo(t, "dut0").LinkFailureCount; int(nl) != failures {
			t.Errorf("netlink link failure count %d, proc %d", nl, failures)
		}
		b := BondIn(t, bt.Sample(t), p.Bond)
		if s := SlaveIn(t, b, "dut0"); !Is(s.LinkFailureCount, failures) || !Is(s.State, "backup") || !Is(s.MIIStatus, "down") {
			t.Errorf("bondtop dut0: link failures %s, state %s, mii %s; kernel %d, backup, down",
				Show(s.LinkFailureCount), Show(s.State), Show(s.MIIStatus), failures)
		}
		if !Is(b.ActiveSlave, "dut1") || !Is(b.Primary, "dut0") {
			t.Errorf("bondtop: active %s primary %s, want dut1 and dut0", Show(b.ActiveSlave), Show(b.Primary))
		}
		if cycle == 1 {
			Capture(t, p.Bond)
		}

		// Cable back: the primary takes over again.
		failover(cycle, "dut1", "dut0", func() { p.Peer.Up(t, "far0") })
	}
	Measure(t, "failover_latency[carrier_change->bondtop_event,median]", median(totals), "ms")
	Measure(t, "failover_latency[carrier_change->bondtop_event,max]", slices.Max(totals), "ms")
	Measure(t, "failover_lag[kernel_notification->bondtop_event,median]", median(lags), "ms")
	Measure(t, "failover_lag[kernel_notification->bondtop_event,max]", slices.Max(lags), "ms")
	if m := median(totals); m > 200 {
		t.Errorf("bondtop reported failovers a median %.0f ms after the carrier change (limit: miimon 100 ms + 100 ms): %v", m, totals)
	}
	t.Logf("bondtop events:%s", FormatEvents(w.Events()))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
