package guest

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/model"
)

// Bondtop is bondtop's collector as the product runs it: the live source
// (netlink, procfs, sysfs, ethtool) in the root namespace and a Sampler.
type Bondtop struct {
	Src     *live.Source
	Sampler *collector.Sampler
}

// NewBondtop starts a collector following bonds (all when none), sampling
// every interval in Run.
func NewBondtop(t testing.TB, interval time.Duration, bonds ...string) *Bondtop {
	t.Helper()
	src, err := live.New()
	if err != nil {
		t.Fatalf("live.New: %v", err)
	}
	t.Cleanup(func() { src.Close() })
	// A short history: the default hour at 100 ms allocates megabytes on
	// the first sample, which in the emulated VM takes seconds.
	opts := collector.Options{Interval: interval, Bonds: bonds, History: time.Minute}
	return &Bondtop{Src: src, Sampler: collector.NewSampler(src, opts)}
}

// Sample takes one synchronous snapshot.
func (b *Bondtop) Sample(t testing.TB) *model.Snapshot {
	t.Helper()
	snap, err := b.Sampler.Sample()
	if err != nil {
		t.Fatalf("bondtop sample: %v", err)
	}
	return snap
}

// BondIn returns the named bond of a snapshot, failing the test without it.
func BondIn(t testing.TB, snap *model.Snapshot, name string) *model.BondSample {
	t.Helper()
	b := snap.Bond(name)
	if b == nil {
		t.Fatalf("bondtop does not show %s (bonds: %d, missing: %v, warnings: %v)", name, len(snap.Bonds), snap.Missing, snap.Warnings)
	}
	return b
}

// SlaveIn returns the named slave of a bond sample.
func SlaveIn(t testing.TB, b *model.BondSample, name string) *model.SlaveSample {
	t.Helper()
	for i := range b.Slaves {
		if b.Slaves[i].Name == name {
			return &b.Slaves[i]
		}
	}
	t.Fatalf("bondtop shows no slave %s in %s", name, b.Name)
	return nil
}

// Watch runs the Sampler in the background (Sampler.Run, notifications
// included) and records every snapshot, each with the time it reached us.
type Watch struct {
	mu     sync.Mutex
	snaps  []*model.Snapshot
	cancel context.CancelFunc
	done   chan struct{}
	err    error // Run's, once done is closed
}

// Watch starts the Sampler's Run loop; it stops at the end of the test.
func (b *Bondtop) Watch(t testing.TB) *Watch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watch{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.err = b.Sampler.Run(ctx, func(s *model.Snapshot) {
			w.mu.Lock()
			w.snaps = append(w.snaps, s)
			w.mu.Unlock()
		})
	}()
	t.Cleanup(func() { w.Stop() })
	return w
}

// Stop ends Run and returns its error.
func (w *Watch) Stop() error {
	w.cancel()
	<-w.done
	return w.err
}

// ended returns Run's error if Run stopped by itself.
func (w *Watch) ended() (bool, error) {
	select {
	case <-w.done:
		return true, w.err
	default:
		return false, nil
	}
}

// Snapshots returns the snapshots so far.
func (w *Watch) Snapshots() []*model.Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*model.Snapshot(nil), w.snaps...)
}

// Events returns every event so far.
func (w *Watch) Events() []model.Event {
	var evs []model.Event
	for _, s := range w.Snapshots() {
		evs = append(evs, s.Events...)
	}
	return evs
}

// WaitEvent waits until an event matching match arrives and returns it.
func (w *Watch) WaitEvent(t testing.TB, timeout time.Duration, what string, match func(model.Event) bool) model.Event {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, e := range w.Events() {
			if match(e) {
				return e
			}
		}
		if ended, err := w.ended(); ended {
			t.Fatalf("waiting for bondtop event %s: the sampler stopped: %v; events: %s", what, err, FormatEvents(w.Events()))
		}
		if time.Now().After(deadline) {
			if len(w.Snapshots()) == 0 {
				// The sampler hangs: show where.
				buf := make([]byte, 1<<20)
				t.Logf("goroutines:\n%s", buf[:runtime.Stack(buf, true)])
			}
			t.Fatalf("no bondtop event %s within %v; events: %s\nsnapshots:%s", what, timeout, FormatEvents(w.Events()), w.summary())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// summary lists the snapshots, one per line: time, bonds and slaves,
// warnings.
func (w *Watch) summary() string {
	out := ""
	for _, s := range w.Snapshots() {
		out += "\n\t" + s.Time.Format("15:04:05.000")
		for _, b := range s.Bonds {
			out += " " + b.Name + "["
			for i, sl := range b.Slaves {
				if i > 0 {
					out += " "
				}
				out += sl.Name
			}
			out += "]"
		}
		if len(s.Warnings) > 0 {
			out += fmt.Sprintf(" warnings: %q", s.Warnings)
		}
	}
	return out
}

// FormatEvents lists events one per line, for messages.
func FormatEvents(evs []model.Event) string {
	out := ""
	for _, e := range evs {
		out += "\n\t" + e.Time.Format("15:04:05.000") + " " + string(e.Kind) + " " + e.Message
	}
	if out == "" {
		return "none"
	}
	return out
}

// RateCheck drives n TCP streams for d between two snapshots taken while
// the links are quiet, and compares bondtop's per-slave tx rates with the
// kernel's tx_bytes deltas. Quiet edges make the kernel's delta and
// bondtop's cover the same bytes; what remains uncertain is when, inside
// each Sample call, bondtop read the counters, so each call is bracketed
// by the test's clock and bondtop's rate must fall within 2% of the range
// those brackets allow. It returns the kernel's per-slave deltas and the
// worst error (%) against the brackets' midpoints, over the slaves that
// carried traffic, and bondtop's sample of the bond after the traffic.
func RateCheck(t testing.TB, bt *Bondtop, p *Pair, n, srcPort int, d time.Duration) ([]uint64, float64, *model.BondSample) {
	t.Helper()
	Settle(t, p.Slaves...)
	t0a := time.Now()
	bt.Sample(t)
	t0b := time.Now()
	c0 := Counters(t, "tx_bytes", p.Slaves...)
	tr := StartTCP(t, p.Peer, p.Local, p.Remote, n, srcPort)
	time.Sleep(d)
	sent, err := tr.Stop()
	if err != nil {
		t.Errorf("traffic: %v", err)
	}
	Settle(t, p.Slaves...) // what the sockets still held
	c1 := Counters(t, "tx_bytes", p.Slaves...)
	t1a := time.Now()
	snap := bt.Sample(t)
	t1b := time.Now()
	b := BondIn(t, snap, p.Bond)
	var total uint64
	for i := range p.Slaves {
		total += c1[i] - c0[i]
	}
	var sum int64
	for _, s := range sent {
		sum += s
	}
	t.Logf("%d streams, %d bytes written in %v: %.0f Mbit/s", n, sum, d, float64(sum)*8/d.Seconds()/1e6)
	// The interval between bondtop's two reads lies in [lo, hi].
	lo, hi := t1a.Sub(t0b).Seconds(), t1b.Sub(t0a).Seconds()
	mid := (lo + hi) / 2
	deltas := make([]uint64, len(p.Slaves))
	worst := 0.0
	for i, name := range p.Slaves {
		deltas[i] = c1[i] - c0[i]
		s := SlaveIn(t, b, name)
		if s.TxBps == nil {
			t.Errorf("%s: bondtop has no tx rate", name)
			continue
		}
		got := *s.TxBps
		if got < 0 {
			t.Errorf("%s: negative tx rate %v", name, got)
		}
		if s.TxBytes != nil {
			// An LACPDU may slip in between the two reads: 124 bytes.
			if diff := int64(*s.TxBytes) - int64(c1[i]); diff < -1024 || diff > 1024 {
				t.Errorf("%s: bondtop tx_bytes %d, kernel %d", name, *s.TxBytes, c1[i])
			}
		}
		bits := float64(deltas[i]) * 8 // bondtop reports bit/s
		if deltas[i] < total/100 {
			// An idle slave: its rate must be small too.
			if got > 0.02*float64(total)*8/lo {
				t.Errorf("%s: bondtop tx %.0f bit/s on a slave the kernel saw idle (%d bytes)", name, got, deltas[i])
			}
			continue
		}
		e := math.Abs(got-bits/mid) / (bits / mid) * 100
		worst = max(worst, e)
		t.Logf("%s: kernel %.1f Mbit/s (%.1f..%.1f), bondtop %.1f Mbit/s (%.2f%%), share %s",
			name, bits/mid/1e6, bits/hi/1e6, bits/lo/1e6, got/1e6, e, share(s.ShareTx))
		if got < 0.98*bits/hi || got > 1.02*bits/lo {
			t.Errorf("%s: bondtop tx %.0f bit/s, kernel %.0f..%.0f bit/s: more than 2%% off", name, got, bits/hi, bits/lo)
		}
	}
	return deltas, worst, b
}

// Settle waits until the interfaces' tx_bytes stop growing (beyond a
// stray LACPDU or ARP), so a reading taken next is at a quiet edge.
func Settle(t testing.TB, ifaces ...string) {
	t.Helper()
	prev := Counters(t, "tx_bytes", ifaces...)
	Eventually(t, 10*time.Second, "links quiet", func() (bool, string) {
		time.Sleep(150 * time.Millisecond)
		cur := Counters(t, "tx_bytes", ifaces...)
		var moved uint64
		for i := range cur {
			moved += cur[i] - prev[i]
		}
		prev = cur
		return moved < 1024, strconv.FormatUint(moved, 10) + " bytes in 150 ms"
	})
}

func share(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'f', 3, 64)
}
