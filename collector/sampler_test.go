package collector_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/internal/testtree"
	"github.com/bondtop/bondtop/model"
)

func newTestSampler(t *testing.T, tr *testtree.Tree, bonds ...string) (*collector.Sampler, *collectortest.Clock) {
	t.Helper()
	src, err := rootdir.New(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	clk := collectortest.NewClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	return collector.NewSampler(src, collector.Options{Interval: time.Second, Bonds: bonds, Clock: clk.Now}), clk
}

func TestSamplerRatesAndShares(t *testing.T) {
	tr := testtree.ActiveBackup(t)
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
	collectortest.Approx(t, "bond tx", b.TxBps, 16e6) // 4 MB * 8 / 2 s
	collectortest.Approx(t, "eth0 tx", b.Slaves[0].TxBps, 12e6)
	collectortest.Approx(t, "eth0 rx", b.Slaves[0].RxBps, 4e6)
	collectortest.Approx(t, "eth1 tx", b.Slaves[1].TxBps, 4e6)
	collectortest.Approx(t, "eth0 tx pps", b.Slaves[0].TxPps, 1500)
	collectortest.Approx(t, "eth0 share tx", b.Slaves[0].ShareTx, 0.75)
	collectortest.Approx(t, "eth1 share tx", b.Slaves[1].ShareTx, 0.25)
	if b.Slaves[1].ShareRx == nil || *b.Slaves[1].ShareRx != 0 {
		t.Fatalf("eth1 share rx = %v, want 0", b.Slaves[1].ShareRx)
	}
	if snap.IntervalSeconds != 2 {
		t.Fatalf("interval %v, want 2", snap.IntervalSeconds)
	}
}

func TestSamplerCounterWentBackIsAGap(t *testing.T) {
	tr := testtree.ActiveBackup(t)
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
	collectortest.Approx(t, "rx after gap", b.Slaves[0].RxBps, 8000)
}

func TestSamplerFailoverEvents(t *testing.T) {
	tr := testtree.ActiveBackup(t)
	s, clk := newTestSampler(t, tr)
	collectortest.MustSample(t, s)
	tr.Write("proc/net/bonding/bond0", testtree.ActiveBackupProc("eth1", "down", "up", 1))
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
	tr := testtree.ActiveBackup(t)
	s, clk := newTestSampler(t, tr)
	collectortest.MustSample(t, s)
	// eth1 released: gone from procfs and sysfs.
	proc := testtree.ActiveBackupProc("eth0", "up", "up", 0)
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
	tr.Write("proc/net/bonding/bond0", testtree.ActiveBackupProc("eth0", "up", "up", 0))
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
	tr := testtree.ActiveBackup(t)
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
	tr := testtree.ActiveBackup(t)
	s, _ := newTestSampler(t, tr, "bond9")
	_, err := s.Sample()
	var nf *collector.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err = %v, want NotFoundError", err)
	}
	if got, want := err.Error(), "bond9 not found; bonds here: bond0"; got != want {
		t.Fatalf("err = %q, want %q", got, want)
	}
}

func TestNoBondingDriver(t *testing.T) {
	tr := testtree.New(t)
	tr.Write("sys/class/net/eth0/mtu", "1500\n")
	src, err := rootdir.New(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = collector.NewSampler(src, collector.Options{}).Sample()
	if !errors.Is(err, collector.ErrNoBonding) {
		t.Fatalf("err = %v, want ErrNoBonding", err)
	}
}

func TestSnapshotJSONNullsAndNames(t *testing.T) {
	tr := testtree.ActiveBackup(t)
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
	tr := testtree.ActiveBackup(t)
	proc := strings.Replace(testtree.ActiveBackupProc("eth0", "up", "up", 0), "Link Failure Count: 0", "Link Failure Count: many", 1)
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

// TestSamplerEventsBetweenTicks: a link change read between two snapshots
// (as Intervals does on a notification) gives its events the time of that
// reading, in the next snapshot, whose rates still cover the whole
// interval; nothing is reported twice.
func TestSamplerEventsBetweenTicks(t *testing.T) {
	tr := testtree.ActiveBackup(t)
	s, clk := newTestSampler(t, tr)
	t0 := clk.Now()
	collectortest.MustSample(t, s)

	clk.Advance(300 * time.Millisecond)
	tr.Write("proc/net/bonding/bond0", testtree.ActiveBackupProc("eth1", "down", "up", 1))
	tr.Write("sys/class/net/bond0/bonding/active_slave", "eth1\n")
	changed := clk.Now()
	if err := s.Observe(); err != nil {
		t.Fatal(err)
	}
	clk.Advance(200 * time.Millisecond)
	if err := s.Observe(); err != nil { // a second notification, nothing new
		t.Fatal(err)
	}
	clk.Advance(500 * time.Millisecond)
	tr.Counters("eth1", 0, 2_000_000)
	snap := collectortest.MustSample(t, s)
	if !snap.Time.Equal(t0.Add(time.Second)) || snap.IntervalSeconds != 1 {
		t.Fatalf("snapshot at %v over %v s, want the tick at %v over 1 s", snap.Time, snap.IntervalSeconds, t0.Add(time.Second))
	}
	collectortest.Approx(t, "eth1 tx over the whole interval", snap.Bond("bond0").Slaves[1].TxBps, 16e6)
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
	if err := s.Observe(); err != nil {
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
	*rootdir.Source
	changes chan struct{}
}

func (n *notifyingRoot) Changes() <-chan struct{} { return n.changes }

// TestRunPrimedWaitsThenFollowsChanges: Run on a Sampler that has sampled
// already takes no snapshot at once (the dashboard's first one must cover
// an interval), one at a notification, and one when a re-read after the
// notification finds a change no notification announced — all long
// before the next tick.
func TestRunPrimedWaitsThenFollowsChanges(t *testing.T) {
	tr := testtree.ActiveBackup(t)
	root, err := rootdir.New(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	src := &notifyingRoot{Source: root, changes: make(chan struct{}, 1)}
	s := collector.NewSampler(src, collector.Options{Interval: 5 * time.Second})
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

	tr.Write("proc/net/bonding/bond0", testtree.ActiveBackupProc("eth1", "down", "up", 1))
	tr.Write("sys/class/net/bond0/bonding/active_slave", "eth1\n")
	src.changes <- struct{}{}
	snap := <-snaps
	if !slices.ContainsFunc(snap.Events, func(e model.Event) bool { return e.Kind == model.EventFailover }) {
		t.Fatalf("the notification's snapshot has no failover: %+v", snap.Events)
	}

	// Unannounced: eth0's failure count goes up again. The re-reads run
	// meanwhile: the file is replaced whole, never seen half written.
	time.Sleep(150 * time.Millisecond)
	tr.Write("bond0.new", testtree.ActiveBackupProc("eth1", "down", "up", 2))
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
