package collector

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/model"
)

func newTestSampler(t *testing.T, tr *collectortest.Tree, bonds ...string) (*Sampler, *collectortest.Clock) {
	t.Helper()
	src, err := NewRootSource(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	clk := collectortest.NewClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	return NewSampler(src, Options{Interval: time.Second, Bonds: bonds, Clock: clk.Now}), clk
}

func approx(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil, want %v", what, want)
	}
	if math.Abs(*got-want) > want*1e-9+1e-9 {
		t.Fatalf("%s = %v, want %v", what, *got, want)
	}
}

func TestSamplerRatesAndShares(t *testing.T) {
	tr := collectortest.ActiveBackupTree(t)
	s, clk := newTestSampler(t, tr)
	first := collectortest.MustSample(t, s)
	if b := first.Bond("bond0"); b == nil || b.TxBps != nil || b.Slaves[0].TxBps != nil {
		t.Fatalf("first sample must have no rates: %+v", first.Bonds)
	}
	tr.Counters("eth0", 1_000_000, 3_000_000)
	tr.Counters("eth1", 0, 1_000_000)
	tr.Counters("bond0", 1_000_000, 4_000_000)
	clk.Advance(2 * time.Second)
	snap := collectortest.MustSample(t, s)
	b := snap.Bond("bond0")
	approx(t, "bond tx", b.TxBps, 16e6) // 4 MB * 8 / 2 s
	approx(t, "eth0 tx", b.Slaves[0].TxBps, 12e6)
	approx(t, "eth0 rx", b.Slaves[0].RxBps, 4e6)
	approx(t, "eth1 tx", b.Slaves[1].TxBps, 4e6)
	approx(t, "eth0 tx pps", b.Slaves[0].TxPps, 1500)
	approx(t, "eth0 share tx", b.Slaves[0].ShareTx, 0.75)
	approx(t, "eth1 share tx", b.Slaves[1].ShareTx, 0.25)
	if b.Slaves[1].ShareRx == nil || *b.Slaves[1].ShareRx != 0 {
		t.Fatalf("eth1 share rx = %v, want 0", b.Slaves[1].ShareRx)
	}
	if snap.IntervalSeconds != 2 {
		t.Fatalf("interval %v, want 2", snap.IntervalSeconds)
	}
}

func TestSamplerCounterWentBackIsAGap(t *testing.T) {
	tr := collectortest.ActiveBackupTree(t)
	tr.Counters("eth0", 5_000_000, 5_000_000)
	s, clk := newTestSampler(t, tr)
	collectortest.MustSample(t, s)
	tr.Counters("eth0", 1000, 6_000_000) // rx reset: a driver reset
	clk.Advance(time.Second)
	b := collectortest.MustSample(t, s).Bond("bond0")
	if e := b.Slaves[0]; e.RxBps != nil || e.TxBps != nil || e.Interval != nil {
		t.Fatalf("rates after a counter went back: rx %v tx %v", e.RxBps, e.TxBps)
	}
	if b.Slaves[0].ShareTx != nil {
		t.Fatal("share must be unknown when one slave's rate is")
	}
	// The next interval measures again from the new base.
	tr.Counters("eth0", 2000, 6_000_100)
	clk.Advance(time.Second)
	b = collectortest.MustSample(t, s).Bond("bond0")
	approx(t, "rx after gap", b.Slaves[0].RxBps, 8000)
}

func TestSamplerFailoverEvents(t *testing.T) {
	tr := collectortest.ActiveBackupTree(t)
	s, clk := newTestSampler(t, tr)
	collectortest.MustSample(t, s)
	tr.Write("proc/net/bonding/bond0", collectortest.ActiveBackupProc("eth1", "down", "up", 1))
	tr.Write("sys/class/net/bond0/bonding/active_slave", "eth1\n")
	clk.Advance(time.Second)
	snap := collectortest.MustSample(t, s)
	kinds := map[model.EventKind]model.Event{}
	for _, e := range snap.Events {
		kinds[e.Kind] = e
	}
	fo, ok := kinds[model.EventFailover]
	if !ok || fo.Old != "eth0" || fo.New != "eth1" || fo.Bond != "bond0" {
		t.Fatalf("want failover eth0 -> eth1, got %+v", snap.Events)
	}
	if e, ok := kinds[model.EventLinkDown]; !ok || e.Slave != "eth0" {
		t.Fatalf("want link_down of eth0, got %+v", snap.Events)
	}
	if e, ok := kinds[model.EventLinkFailure]; !ok || e.Old != "0" || e.New != "1" {
		t.Fatalf("want link failure 0 -> 1, got %+v", snap.Events)
	}
	for _, e := range snap.Events {
		if !e.Time.Equal(clk.Now()) {
			t.Fatalf("event time %v, want %v", e.Time, clk.Now())
		}
	}
}

func TestSamplerSlaveRemovedAndAdded(t *testing.T) {
	tr := collectortest.ActiveBackupTree(t)
	s, clk := newTestSampler(t, tr)
	collectortest.MustSample(t, s)
	// eth1 released: gone from procfs and sysfs.
	proc := collectortest.ActiveBackupProc("eth0", "up", "up", 0)
	proc = proc[:strings.Index(proc, "\nSlave Interface: eth1")+1]
	tr.Write("proc/net/bonding/bond0", proc)
	tr.Write("sys/class/net/bond0/bonding/slaves", "eth0\n")
	clk.Advance(time.Second)
	snap := collectortest.MustSample(t, s)
	if b := snap.Bond("bond0"); len(b.Slaves) != 1 {
		t.Fatalf("slaves after release: %d", len(b.Slaves))
	}
	if len(snap.Events) != 1 || snap.Events[0].Kind != model.EventSlaveRemoved || snap.Events[0].Slave != "eth1" {
		t.Fatalf("events %+v", snap.Events)
	}
	// Re-enslaved with counters reset by its driver.
	tr.Write("proc/net/bonding/bond0", collectortest.ActiveBackupProc("eth0", "up", "up", 0))
	tr.Write("sys/class/net/bond0/bonding/slaves", "eth0 eth1\n")
	tr.Counters("eth1", 10, 10)
	clk.Advance(time.Second)
	snap = collectortest.MustSample(t, s)
	b := snap.Bond("bond0")
	if len(b.Slaves) != 2 || b.Slaves[1].Name != "eth1" || b.Slaves[1].TxBps != nil {
		t.Fatalf("re-added slave must come back without a rate: %+v", b.Slaves)
	}
	if len(snap.Events) != 1 || snap.Events[0].Kind != model.EventSlaveAdded {
		t.Fatalf("events %+v", snap.Events)
	}
}

func TestSamplerBondGoneAndDriverGone(t *testing.T) {
	tr := collectortest.ActiveBackupTree(t)
	s, clk := newTestSampler(t, tr, "bond0")
	collectortest.MustSample(t, s)
	tr.Remove("proc/net/bonding/bond0")
	tr.Write("sys/class/net/bonding_masters", "\n")
	tr.Remove("sys/class/net/bond0")
	clk.Advance(time.Second)
	snap := collectortest.MustSample(t, s)
	if len(snap.Bonds) != 0 || len(snap.Missing) != 1 || snap.Missing[0] != "bond0" {
		t.Fatalf("bonds %v missing %v", snap.Bonds, snap.Missing)
	}
	if len(snap.Events) != 1 || snap.Events[0].Kind != model.EventBondGone {
		t.Fatalf("events %+v", snap.Events)
	}
	// The driver unloads too: still a snapshot, not an error.
	tr.Remove("proc")
	tr.Remove("sys/class/net/bonding_masters")
	clk.Advance(time.Second)
	snap = collectortest.MustSample(t, s)
	if len(snap.Missing) != 1 || len(snap.Warnings) == 0 {
		t.Fatalf("after driver unload: missing %v warnings %v", snap.Missing, snap.Warnings)
	}
}

func TestSamplerUnknownBond(t *testing.T) {
	tr := collectortest.ActiveBackupTree(t)
	s, _ := newTestSampler(t, tr, "bond9")
	_, err := s.Sample()
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err = %v, want NotFoundError", err)
	}
	if got, want := err.Error(), "bond9 not found; bonds here: bond0"; got != want {
		t.Fatalf("err = %q, want %q", got, want)
	}
}

func TestNoBondingDriver(t *testing.T) {
	tr := collectortest.NewTree(t)
	tr.Write("sys/class/net/eth0/mtu", "1500\n")
	src, err := NewRootSource(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewSampler(src, Options{}).Sample()
	if !errors.Is(err, ErrNoBonding) {
		t.Fatalf("err = %v, want ErrNoBonding", err)
	}
}

func TestSnapshotJSONNullsAndNames(t *testing.T) {
	tr := collectortest.ActiveBackupTree(t)
	s, clk := newTestSampler(t, tr)
	collectortest.MustSample(t, s)
	clk.Advance(time.Second)
	data, err := json.Marshal(collectortest.MustSample(t, s))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Bonds []map[string]json.RawMessage `json:"bonds"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	b := doc.Bonds[0]
	for key, want := range map[string]string{
		"name": `"bond0"`, "mode": `"active-backup"`, "lacp": "null", "xmit_hash_policy": "null",
		"active_slave": `"eth0"`, "primary": "null", "miimon_ms": "100", "mtu": "1500",
	} {
		if got := string(b[key]); got != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
	var slaves []map[string]json.RawMessage
	if err := json.Unmarshal(b["slaves"], &slaves); err != nil {
		t.Fatal(err)
	}
	if len(slaves) != 2 {
		t.Fatalf("slaves: %d", len(slaves))
	}
	for key, want := range map[string]string{
		"name": `"eth0"`, "state": `"active"`, "speed_mbps": "1000", "duplex": `"full"`,
		"aggregator_id": "null", "actor": "null", "partner": "null", "tx_bps": "0", "share_tx": "null",
		"perm_hwaddr": `"52:54:00:00:00:01"`, "queue_id": "0", "link_failure_count": "0",
	} {
		if got := string(slaves[0][key]); got != want {
			t.Errorf("slave %s = %s, want %s", key, got, want)
		}
	}
}

// TestGarbledFilesLoseOnlyTheirFields: a damaged procfs value and an
// unreadable counter give warnings naming the file; every other field and
// the other slave's rates still come through.
func TestGarbledFilesLoseOnlyTheirFields(t *testing.T) {
	tr := collectortest.ActiveBackupTree(t)
	proc := strings.Replace(collectortest.ActiveBackupProc("eth0", "up", "up", 0), "Link Failure Count: 0", "Link Failure Count: many", 1)
	tr.Write("proc/net/bonding/bond0", proc)
	tr.Write("sys/class/net/eth0/bonding_slave/link_failure_count", "also garbage\n")
	s, clk := newTestSampler(t, tr)
	collectortest.MustSample(t, s)
	tr.Write("sys/class/net/eth1/statistics/tx_bytes", "12x\n")
	tr.Counters("eth0", 1000, 1000)
	clk.Advance(time.Second)
	snap := collectortest.MustSample(t, s)
	b := snap.Bond("bond0")
	if b.Slaves[0].LinkFailureCount != nil {
		t.Errorf("garbled link failure count = %v, want nil", *b.Slaves[0].LinkFailureCount)
	}
	if b.Slaves[0].PermHWAddr == nil || b.Slaves[1].LinkFailureCount == nil || b.ActiveSlave == nil {
		t.Error("fields of undamaged lines must survive")
	}
	if b.Slaves[0].TxBps == nil || b.Slaves[1].TxBps != nil || b.Slaves[1].RxBps == nil {
		t.Errorf("eth0 tx %v, eth1 tx %v (garbled), eth1 rx %v", b.Slaves[0].TxBps, b.Slaves[1].TxBps, b.Slaves[1].RxBps)
	}
	all := strings.Join(snap.Warnings, "\n")
	for _, want := range []string{"/proc/net/bonding/bond0", "Link Failure Count: many", "/sys/class/net/eth1/statistics/tx_bytes", "/sys/class/net/eth0/bonding_slave/link_failure_count"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings do not mention %q:\n%s", want, all)
		}
	}
}

// testRing is one series on its own clock.
type testRing struct {
	c   *clock
	col column
}

func newTestRing(n int) *testRing { return &testRing{c: newClock(n)} }

func (r *testRing) push(t time.Time, v *float64) {
	val := float32(math.NaN())
	if v != nil {
		val = float32(*v)
	}
	r.col.put(r.c, r.c.tick(t), val)
}

func (r *testRing) since(dst []Point, t time.Time) []Point { return pointsSince(dst, r.c, &r.col, t) }
func (r *testRing) first() (time.Time, bool)               { return r.c.first() }

// TestHistoryRingWraps fills a ring past its capacity: it keeps the newest
// samples, oldest first, and unknown rates stay NaN (a gap, not a zero).
func TestHistoryRingWraps(t *testing.T) {
	r := newTestRing(3)
	t0 := time.Unix(100, 0)
	for i := range 5 {
		v := float64(i)
		p := &v
		if i == 3 {
			p = nil
		}
		r.push(t0.Add(time.Duration(i)*time.Second), p)
	}
	got := r.since(nil, time.Time{})
	if len(got) != 3 || got[0].Value != 2 || !math.IsNaN(float64(got[1].Value)) || got[2].Value != 4 {
		t.Fatalf("%+v", got)
	}
	if got := r.since(nil, t0.Add(4*time.Second)); len(got) != 1 || got[0].Value != 4 {
		t.Fatalf("since the last second: %+v", got)
	}
}

// TestHistoryRingClockJumps: the ring keeps its times as 32-bit
// milliseconds after a base; a clock set back moves the base and keeps
// the samples, in the order they came; a jump of more than 49 days (a host
// asleep for weeks) drops what is held rather than wrap.
func TestHistoryRingClockJumps(t *testing.T) {
	r := newTestRing(10)
	t0 := time.Unix(1_000_000, 123_456_789)
	one := 1.0
	r.push(t0, &one)
	r.push(t0.Add(time.Second), &one)
	back := t0.Add(-time.Hour)
	r.push(back, &one) // set back by an hour
	got := r.since(nil, time.Time{})
	want := []time.Time{t0, t0.Add(time.Second), back}
	if len(got) != len(want) {
		t.Fatalf("%d points after the clock went back, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Truncate(time.Millisecond)) {
			t.Errorf("point %d at %v, want %v (to the millisecond)", i, got[i].Time, want[i])
		}
	}
	far := t0.Add(50 * 24 * time.Hour)
	r.push(far, &one)
	if got := r.since(nil, time.Time{}); len(got) != 1 || !got[0].Time.Equal(far.Truncate(time.Millisecond)) {
		t.Fatalf("after 50 days: %+v, want only the new point", got)
	}
	if first, ok := r.first(); !ok || !first.Equal(far.Truncate(time.Millisecond)) {
		t.Fatalf("first %v %v, want %v", first, ok, far)
	}
}

// TestHistorySinceCutsWhereTimeDoes checks the bisection against a plain
// scan on a wrapped ring, for every cut point.
func TestHistorySinceCutsWhereTimeDoes(t *testing.T) {
	r := newTestRing(50)
	t0 := time.Unix(1000, 0)
	for i := range 137 {
		v := float64(i)
		r.push(t0.Add(time.Duration(i)*100*time.Millisecond), &v)
	}
	for cut := -1; cut <= 140; cut++ {
		at := t0.Add(time.Duration(cut) * 100 * time.Millisecond)
		got := r.since(nil, at)
		want := 0
		for i := 87; i < 137; i++ { // the 50 newest samples
			if i >= cut {
				want++
			}
		}
		if len(got) != want || (want > 0 && got[0].Time.Before(at)) {
			t.Fatalf("cut %d: %d points from %v, want %d", cut, len(got), got, want)
		}
	}
}

// TestSamplerEventsBetweenTicks: a link change read between two snapshots
// (as Intervals does on a notification) gives its events the time of that
// reading, in the next snapshot, whose rates still cover the whole
// interval; nothing is reported twice.
func TestSamplerEventsBetweenTicks(t *testing.T) {
	tr := collectortest.ActiveBackupTree(t)
	s, clk := newTestSampler(t, tr)
	t0 := clk.Now()
	collectortest.MustSample(t, s)

	clk.Advance(300 * time.Millisecond)
	tr.Write("proc/net/bonding/bond0", collectortest.ActiveBackupProc("eth1", "down", "up", 1))
	tr.Write("sys/class/net/bond0/bonding/active_slave", "eth1\n")
	changed := clk.Now()
	if err := s.observe(); err != nil {
		t.Fatal(err)
	}
	clk.Advance(200 * time.Millisecond)
	if err := s.observe(); err != nil { // a second notification, nothing new
		t.Fatal(err)
	}
	clk.Advance(500 * time.Millisecond)
	tr.Counters("eth1", 0, 2_000_000)
	snap := collectortest.MustSample(t, s)
	if !snap.Time.Equal(t0.Add(time.Second)) || snap.IntervalSeconds != 1 {
		t.Fatalf("snapshot at %v over %v s, want the tick at %v over 1 s", snap.Time, snap.IntervalSeconds, t0.Add(time.Second))
	}
	approx(t, "eth1 tx over the whole interval", snap.Bond("bond0").Slaves[1].TxBps, 16e6)
	kinds := map[model.EventKind]int{}
	for _, e := range snap.Events {
		kinds[e.Kind]++
		if !e.Time.Equal(changed) {
			t.Errorf("%s at %v, want the time of the reading that saw it, %v", e.Kind, e.Time, changed)
		}
	}
	if kinds[model.EventFailover] != 1 || kinds[model.EventLinkDown] != 1 || kinds[model.EventLinkFailure] != 1 {
		t.Fatalf("want one failover, link_down and link_failure, got %+v", snap.Events)
	}

	// The next interval starts empty; a bond deleted between ticks is gone
	// once, at the reading that missed it.
	clk.Advance(400 * time.Millisecond)
	tr.Remove("proc/net/bonding/bond0")
	tr.Write("sys/class/net/bonding_masters", "\n")
	tr.Remove("sys/class/net/bond0")
	gone := clk.Now()
	if err := s.observe(); err != nil {
		t.Fatal(err)
	}
	clk.Advance(600 * time.Millisecond)
	snap = collectortest.MustSample(t, s)
	if len(snap.Events) != 1 || snap.Events[0].Kind != model.EventBondGone || !snap.Events[0].Time.Equal(gone) {
		t.Fatalf("want one bond_gone at %v, got %+v", gone, snap.Events)
	}
	clk.Advance(time.Second)
	if snap = collectortest.MustSample(t, s); len(snap.Events) != 0 {
		t.Fatalf("events repeated: %+v", snap.Events)
	}
}

// notifyingRoot is a --root tree that announces changes when the test
// says so, as the live source does on netlink notifications.
type notifyingRoot struct {
	*RootSource
	changes chan struct{}
}

func (n *notifyingRoot) Changes() <-chan struct{} { return n.changes }

// TestRunPrimedWaitsThenFollowsChanges: Run on a Sampler that has sampled
// already takes no snapshot at once (the dashboard's first one must cover
// an interval), one at a notification, and one when a re-read after the
// notification finds a change no notification announced — all long
// before the next tick.
func TestRunPrimedWaitsThenFollowsChanges(t *testing.T) {
	tr := collectortest.ActiveBackupTree(t)
	root, err := NewRootSource(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	src := &notifyingRoot{RootSource: root, changes: make(chan struct{}, 1)}
	s := NewSampler(src, Options{Interval: 5 * time.Second})
	if _, err := s.Sample(); err != nil {
		t.Fatal(err)
	}
	snaps := make(chan *model.Snapshot, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, func(snap *model.Snapshot) { snaps <- snap }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	select {
	case snap := <-snaps:
		t.Fatalf("a primed Run sampled at once (%v)", snap.Time)
	case <-time.After(300 * time.Millisecond):
	}

	tr.Write("proc/net/bonding/bond0", collectortest.ActiveBackupProc("eth1", "down", "up", 1))
	tr.Write("sys/class/net/bond0/bonding/active_slave", "eth1\n")
	src.changes <- struct{}{}
	snap := <-snaps
	if !slices.ContainsFunc(snap.Events, func(e model.Event) bool { return e.Kind == model.EventFailover }) {
		t.Fatalf("the notification's snapshot has no failover: %+v", snap.Events)
	}

	// Unannounced: eth0's failure count goes up again. The re-reads run
	// meanwhile: the file is replaced whole, never seen half written.
	time.Sleep(150 * time.Millisecond)
	tr.Write("bond0.new", collectortest.ActiveBackupProc("eth1", "down", "up", 2))
	changed := time.Now()
	if err := os.Rename(tr.Dir+"/bond0.new", tr.Dir+"/proc/net/bonding/bond0"); err != nil {
		t.Fatal(err)
	}
	select {
	case snap = <-snaps:
	case <-time.After(3 * time.Second):
		t.Fatal("no snapshot for the unannounced change before the tick")
	}
	if len(snap.Events) != 1 || snap.Events[0].Kind != model.EventLinkFailure || snap.Events[0].Time.Before(changed) {
		t.Fatalf("want a link_failure read after %v, got %+v", changed, snap.Events)
	}
	t.Logf("unannounced change read %v after it happened", snap.Events[0].Time.Sub(changed))
}

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
	approx(t, "the slave, the same link throughout", b.Slaves[0].RxBps, 80_000)

	src.bond.Counters = counters(9, 2_000_001_000)
	clk.Advance(100 * time.Millisecond)
	approx(t, "the new bond's second tick", collectortest.MustSample(t, s).Bond("bond0").RxBps, 80_000)
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
	approx(t, "bond tx", snap.Bond("bond0").TxBps, 100e6)
	approx(t, "eth0 tx", snap.Bond("bond0").Slaves[0].TxBps, 100e6)
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
		approx(t, name+" tx", b.TxBps, 8e6)
		approx(t, name+" slave tx", b.Slaves[0].TxBps, 8e6)
	}
	if math.Abs(snap.IntervalSeconds-1) > 1e-9 {
		t.Errorf("interval %v s, want the kernel's counters' 1 s", snap.IntervalSeconds)
	}
}
