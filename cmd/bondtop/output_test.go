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
)

// notifyingSource is an active-backup bond0 over eth0 and eth1 that fails
// over when the test says so, and announces it the way the live source
// does: a value on Changes. It notes when each Read began.
type notifyingSource struct {
	mu      sync.Mutex
	active  string
	reads   []time.Time
	read    chan int // the number of each finished Read
	changes chan struct{}
}

func newNotifyingSource() *notifyingSource {
	return &notifyingSource{active: "eth0", read: make(chan int, 64), changes: make(chan struct{}, 1)}
}

func (f *notifyingSource) Read() (collector.Reading, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, time.Now())
	b := bonding.Bond{Name: "bond0", Mode: new("active-backup"), MIIStatus: new("up"), ActiveSlave: new(f.active)}
	for _, name := range []string{"eth0", "eth1"} {
		state, mii := "backup", "up"
		if name == f.active {
			state = "active"
		} else if f.active == "eth1" {
			mii = "down" // eth0 lost its link
		}
		b.Slaves = append(b.Slaves, bonding.Slave{Name: name, State: new(state), MIIStatus: new(mii)})
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
// another wait has passed, then notifies.
func (f *notifyingSource) failoverAfter(afterRead int, wait time.Duration) {
	for n := range f.read {
		if n == afterRead {
			break
		}
	}
	time.Sleep(wait)
	f.mu.Lock()
	f.active = "eth1"
	f.mu.Unlock()
	f.changes <- struct{}{}
}

func (f *notifyingSource) readTimes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.reads...)
}

// TestCountEventsAtTheNotification: --count 3 --json over a source that
// fails over a quarter into the second interval and says so. The output
// still has 3 lines, one per interval, each with rates over the whole
// interval; the failover's events are in the second, stamped by the
// reading the notification caused (between its start and the next
// tick's), not at the tick.
func TestCountEventsAtTheNotification(t *testing.T) {
	src := newNotifyingSource()
	interval := 400 * time.Millisecond
	go src.failoverAfter(2, interval/4) // read 1 primes, read 2 is the first line's
	var out bytes.Buffer
	if err := sampleAndPrint(src, options{interval: interval, count: 3, json: true}, 3, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out.String())
	}
	snaps := make([]collector.Snapshot, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &snaps[i]); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	for _, e := range snaps[1].Events {
		if e.Time.Equal(snaps[1].Time) {
			t.Errorf("%s stamped at the tick (%s), not when it was announced", e.Kind, e.Time.Format(stamp))
		}
	}
	reads := src.readTimes()
	// prime, line 1, the notification's reading, line 2, line 3
	if len(reads) != 5 {
		t.Fatalf("%d reads, want 5 (a prime, 3 ticks, 1 notification)", len(reads))
	}
	for i := 1; i < 3; i++ {
		span := snaps[i].Time.Sub(snaps[i-1].Time).Seconds()
		if math.Abs(snaps[i].IntervalSeconds-span) > 0.002 {
			t.Errorf("line %d: interval_s %.3f, but %.3f s since the previous line: rates must cover the whole interval", i+1, snaps[i].IntervalSeconds, span)
		}
	}
	if len(snaps[0].Events) != 0 || len(snaps[2].Events) != 0 {
		t.Errorf("events outside the second line: %+v / %+v", snaps[0].Events, snaps[2].Events)
	}
	kinds := map[collector.EventKind]bool{}
	for _, e := range snaps[1].Events {
		kinds[e.Kind] = true
		if e.Time.Before(reads[2]) || !e.Time.Before(reads[3]) {
			t.Errorf("%s at %s; the notification's reading ran %s..%s, the tick at %s",
				e.Kind, e.Time.Format(stamp), reads[2].Format(stamp), reads[3].Format(stamp), snaps[1].Time.Format(stamp))
		}
	}
	for _, k := range []collector.EventKind{collector.EventFailover, collector.EventLinkDown, collector.EventSlaveState} {
		if !kinds[k] {
			t.Errorf("no %s event in line 2: %+v", k, snaps[1].Events)
		}
	}
}

// TestOnceEventsAtTheNotification: --once --json, a failover a quarter
// into its one interval: the document carries it at the reading the
// notification caused.
func TestOnceEventsAtTheNotification(t *testing.T) {
	src := newNotifyingSource()
	interval := 400 * time.Millisecond
	go src.failoverAfter(1, interval/4)
	var out bytes.Buffer
	if err := sampleAndPrint(src, options{interval: interval, once: true, json: true}, 1, &out); err != nil {
		t.Fatal(err)
	}
	var snap collector.Snapshot
	if err := json.Unmarshal(out.Bytes(), &snap); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	for _, e := range snap.Events {
		if e.Time.Equal(snap.Time) {
			t.Errorf("%s stamped at the tick (%s), not when it was announced", e.Kind, e.Time.Format(stamp))
		}
	}
	reads := src.readTimes()
	if len(reads) != 3 {
		t.Fatalf("%d reads, want 3 (a prime, the notification, the tick)", len(reads))
	}
	var got []string
	for _, e := range snap.Events {
		got = append(got, fmt.Sprintf("%s@%s", e.Kind, e.Time.Format(stamp)))
		if e.Time.Before(reads[1]) || !e.Time.Before(reads[2]) {
			t.Errorf("%s at %s, want within the notification's reading %s..%s", e.Kind, e.Time.Format(stamp), reads[1].Format(stamp), reads[2].Format(stamp))
		}
	}
	if len(snap.Events) == 0 {
		t.Fatalf("no events:\n%s", out.String())
	}
	t.Logf("events %v, snapshot at %s", got, snap.Time.Format(stamp))
}

const stamp = "15:04:05.000000"
