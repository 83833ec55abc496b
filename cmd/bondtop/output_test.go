package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
)

// notifyingSource is an active-backup bond0 over eth0 and eth1 that fails
// over when the test says so, and announces it the way the live source
// does: a value on Changes. Later eth0's link failure count goes up
// without a notification, as LACP details do in the kernel. It notes when
// each Read began, and which Read came first after the notification.
type notifyingSource struct {
	mu       sync.Mutex
	active   string
	failures int
	reads    []time.Time
	notified int // index of the first Read after the notification; -1 before
	pending  bool
	read     chan int // the number of each finished Read
	changes  chan struct{}
	silentAt time.Time // when the failure count went up
}

func newNotifyingSource() *notifyingSource {
	return &notifyingSource{active: "eth0", notified: -1, read: make(chan int, 64), changes: make(chan struct{}, 1)}
}

func (f *notifyingSource) Read() (collector.Reading, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending {
		f.pending, f.notified = false, len(f.reads)
	}
	f.reads = append(f.reads, time.Now())
	b := bonding.Bond{Name: "bond0", Mode: new("active-backup"), MIIStatus: new("up"), ActiveSlave: new(f.active)}
	for _, name := range []string{"eth0", "eth1"} {
		state, mii := "backup", "up"
		if name == f.active {
			state = "active"
		} else if f.active == "eth1" {
			mii = "down" // eth0 lost its link
		}
		failures := 0
		if name == "eth0" {
			failures = f.failures
		}
		b.Slaves = append(b.Slaves, bonding.Slave{Name: name, State: new(state), MIIStatus: new(mii), LinkFailureCount: new(failures)})
	}
	select {
	case f.read <- len(f.reads):
	default:
	}
	return collector.Reading{Bonds: []bonding.Bond{b}}, nil
}

func (f *notifyingSource) Changes() <-chan struct{} { return f.changes }
func (f *notifyingSource) Close() error             { return nil }

// failoverAfter fails the bond over once the afterRead-th Read is done and
// another wait has passed, then notifies; after a second wait the failure
// count goes up, unannounced.
func (f *notifyingSource) failoverAfter(afterRead int, wait, silent time.Duration) {
	for n := range f.read {
		if n == afterRead {
			break
		}
	}
	time.Sleep(wait)
	f.mu.Lock()
	f.active, f.pending = "eth1", true
	f.mu.Unlock()
	f.changes <- struct{}{}
	time.Sleep(silent)
	f.mu.Lock()
	f.failures, f.silentAt = 1, time.Now()
	f.mu.Unlock()
}

// readings returns when each Read began, the index of the one the
// notification caused, and when the silent change happened.
func (f *notifyingSource) readings() ([]time.Time, int, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.reads...), f.notified, f.silentAt
}

// checkEventTimes checks the events of the snapshot at the end of the
// interval with the failover: the failover's own events are stamped by the
// reading the notification caused (between its start and the next
// reading's), the silent change's by one of the re-reads that follow a
// notification, none at the tick.
func checkEventTimes(t *testing.T, src *notifyingSource, snap *model.Snapshot) {
	t.Helper()
	reads, notified, silentAt := src.readings()
	if notified < 0 || notified+1 >= len(reads) {
		t.Fatalf("reads at %v: none came after the notification", reads)
	}
	kinds := map[model.EventKind]bool{}
	for _, e := range snap.Events {
		kinds[e.Kind] = true
		if e.Time.Equal(snap.Time) {
			t.Errorf("%s stamped at the tick (%s), not when bondtop read it", e.Kind, e.Time.Format(stamp))
			continue
		}
		if e.Kind == model.EventLinkFailure {
			// Found by one of the re-reads every 100 ms after the
			// notification (not the tick: checked above).
			if e.Time.Before(silentAt) {
				t.Errorf("unannounced %s at %s, before the change at %s", e.Kind, e.Time.Format(stamp), silentAt.Format(stamp))
			}
			t.Logf("unannounced %s read %v after the change", e.Kind, e.Time.Sub(silentAt))
			continue
		}
		if e.Time.Before(reads[notified]) || !e.Time.Before(reads[notified+1]) {
			t.Errorf("%s at %s; the notification's reading ran %s..%s, the tick at %s",
				e.Kind, e.Time.Format(stamp), reads[notified].Format(stamp), reads[notified+1].Format(stamp), snap.Time.Format(stamp))
		}
	}
	for _, k := range []model.EventKind{model.EventFailover, model.EventLinkDown, model.EventSlaveState, model.EventLinkFailure} {
		if !kinds[k] {
			t.Errorf("no %s event: %+v", k, snap.Events)
		}
	}
}

// TestCountEventsAtTheNotification: --count 3 --json over a source that
// fails over a quarter into the second interval and says so. The output
// still has 3 lines, one per interval, each with rates over the whole
// interval; the failover's events are in the second, stamped when bondtop
// read them, not at the tick.
func TestCountEventsAtTheNotification(t *testing.T) {
	src := newNotifyingSource()
	interval := 800 * time.Millisecond
	go src.failoverAfter(2, interval/4, interval/4) // read 1 primes, read 2 is the first line's
	var out bytes.Buffer
	if err := sampleAndPrint(src, options{interval: interval, count: 3, json: true}, 3, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out.String())
	}
	snaps := make([]model.Snapshot, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &snaps[i]); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	for i := 1; i < 3; i++ {
		// The lines' times are wall-clock times, which the system may be
		// slewing (by 0.5% on this VM one day; chrony allows up to 8.3%),
		// while interval_s is measured on the monotonic clock. Rates over
		// part of the interval, the fault this guards against, would
		// be a quarter short here (the failover's reading comes a
		// quarter into it).
		span := snaps[i].Time.Sub(snaps[i-1].Time).Seconds()
		if math.Abs(snaps[i].IntervalSeconds-span) > max(0.002, 0.1*span) {
			t.Errorf("line %d: interval_s %.3f, but %.3f s since the previous line: rates must cover the whole interval", i+1, snaps[i].IntervalSeconds, span)
		}
	}
	if len(snaps[0].Events) != 0 || len(snaps[2].Events) != 0 {
		t.Errorf("events outside the second line: %+v / %+v", snaps[0].Events, snaps[2].Events)
	}
	checkEventTimes(t, src, &snaps[1])
}

// TestOnceEventsAtTheNotification: --once --json, a failover a quarter
// into its one interval: the document carries it at the reading the
// notification caused.
func TestOnceEventsAtTheNotification(t *testing.T) {
	src := newNotifyingSource()
	interval := 800 * time.Millisecond
	go src.failoverAfter(1, interval/4, interval/4)
	var out bytes.Buffer
	if err := sampleAndPrint(src, options{interval: interval, once: true, json: true}, 1, &out); err != nil {
		t.Fatal(err)
	}
	var snap model.Snapshot
	if err := json.Unmarshal(out.Bytes(), &snap); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	checkEventTimes(t, src, &snap)
	var got []string
	for _, e := range snap.Events {
		got = append(got, fmt.Sprintf("%s@%s", e.Kind, e.Time.Format(stamp)))
	}
	t.Logf("events %v, snapshot at %s", got, snap.Time.Format(stamp))
}

const stamp = "15:04:05.000000"
