package collector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// Interval limits: faster than 100 ms the counters' own update cadence in
// many drivers makes rates jitter more than they inform.
const (
	DefaultInterval = time.Second
	MinInterval     = 100 * time.Millisecond
	DefaultHistory  = time.Hour
)

// Options configure a Sampler.
type Options struct {
	// Interval between samples; DefaultInterval when zero.
	Interval time.Duration
	// Bonds to follow, by name; every bond when empty.
	Bonds []string
	// History is how much rate history to keep per series.
	History time.Duration
	// Clock returns the current time with a monotonic reading; time.Now
	// when nil. Tests fast-forward it.
	Clock func() time.Time
	// Sinks receive every snapshot, on the sampling goroutine, before
	// Sample returns it: the fan-out to a recorder or a metrics endpoint
	// that should see every mode's snapshots. They must not block.
	Sinks []func(*Snapshot)
	// Flows lists the host's sockets for each bond's flow table; when nil,
	// the Source if it is a FlowReader (the demo).
	Flows FlowReader
	// FlowInterval is the time between socket dumps; DefaultFlowInterval
	// when zero.
	FlowInterval time.Duration
	// Neighbors tells each slave's LLDP/CDP neighbour; when nil, the Source
	// if it is a NeighborReader (the live source, the demo).
	Neighbors NeighborReader
	// Analyze, when set, runs on every snapshot before it is recorded or
	// handed out, and fills BondSample.Findings (diagnose.Window.Fill).
	Analyze func(*Snapshot)
}

// Sampler reads a Source and turns consecutive readings into Snapshots.
// Sample and Run must not be called concurrently; History, Interval and
// SetInterval may be called from any goroutine.
type Sampler struct {
	src     Source
	opts    Options
	hist    *History
	prevAt  time.Time
	prev    map[string]*bonding.Bond // by bond name, the last reading
	started bool
	// interval is the pace in force (nanoseconds): a UI changes it from its
	// own goroutine while Run ticks, so it is atomic, and intervalChanged
	// wakes Run to re-arm its ticker.
	interval        atomic.Int64
	intervalChanged chan struct{}
	flows           *flowTracker     // nil without a FlowReader
	host            *hostCache       // nil when the Source is no HostReader
	neighbors       *neighborTracker // nil without a NeighborReader
}

// NewSampler makes a Sampler over src.
func NewSampler(src Source, opts Options) *Sampler {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Interval < MinInterval {
		opts.Interval = MinInterval
	}
	if opts.History <= 0 {
		opts.History = DefaultHistory
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	s := &Sampler{
		src:             src,
		opts:            opts,
		hist:            NewHistory(opts.History, opts.Interval),
		prev:            make(map[string]*bonding.Bond),
		intervalChanged: make(chan struct{}, 1),
	}
	s.interval.Store(int64(opts.Interval))
	if opts.Flows == nil {
		opts.Flows, _ = src.(FlowReader)
	}
	if opts.Flows != nil {
		s.flows = newFlowTracker(opts.Flows, opts.FlowInterval)
	}
	if opts.Neighbors == nil {
		opts.Neighbors, _ = src.(NeighborReader)
	}
	counters, _ := src.(PortCounterReader)
	if opts.Neighbors != nil || counters != nil {
		s.neighbors = newNeighborTracker(opts.Neighbors, counters)
		s.neighbors.firmware, _ = src.(FirmwareLLDPReader)
	}
	if h, ok := src.(HostReader); ok {
		s.host = &hostCache{r: h}
	}
	return s
}

// Interval is the sampling interval in force.
func (s *Sampler) Interval() time.Duration { return time.Duration(s.interval.Load()) }

// SetInterval changes the time between samples (at least MinInterval) and
// returns the interval now in force. Run, if running, samples at once and
// then keeps the new pace. The history keeps the capacity it was sized for
// at the first interval, so a faster pace holds a shorter span.
func (s *Sampler) SetInterval(d time.Duration) time.Duration {
	d = max(d, MinInterval)
	if time.Duration(s.interval.Swap(int64(d))) != d {
		select {
		case s.intervalChanged <- struct{}{}:
		default: // Run has a wake-up pending already
		}
	}
	return d
}

// History is the rate history of every series the Sampler has seen.
func (s *Sampler) History() *History { return s.hist }

// NotFoundError says a requested bond does not exist and which do.
type NotFoundError struct {
	Name  string
	Bonds []string
}

func (e *NotFoundError) Error() string {
	if len(e.Bonds) == 0 {
		return fmt.Sprintf("%s not found; this host has no bonds", e.Name)
	}
	return fmt.Sprintf("%s not found; bonds here: %s", e.Name, joinNames(e.Bonds))
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

// Sample reads the source once and returns the Snapshot. The first call
// checks that every requested bond exists (a *NotFoundError if not); later
// calls report a vanished bond as an event instead.
func (s *Sampler) Sample() (*Snapshot, error) {
	r, err := s.src.Read()
	if errors.Is(err, ErrNoBonding) && s.started {
		// The driver went away mid-run: every bond is gone. That is news
		// for the user, not a reason to stop watching.
		r, err = Reading{Warnings: []string{err.Error()}}, nil
	}
	if err != nil {
		return nil, err
	}
	return s.sampleReading(r)
}

func (s *Sampler) sampleReading(r Reading) (*Snapshot, error) {
	now := s.opts.Clock()
	if !s.started {
		for _, name := range s.opts.Bonds {
			if r.Bond(name) == nil {
				names := make([]string, len(r.Bonds))
				for i := range r.Bonds {
					names[i] = r.Bonds[i].Name
				}
				return nil, &NotFoundError{Name: name, Bonds: names}
			}
		}
	}
	// Events is never nil: JSON consumers get [] rather than null.
	snap := &Snapshot{Time: now, Warnings: r.Warnings, Events: []Event{}}
	if r.Unprivileged {
		snap.Notes = append(snap.Notes, "not root: the LACP system priority and MAC and each slave's LACPDU details (partner system, keys, ports) need CAP_NET_ADMIN (run bondtop with sudo to see them)")
	}
	seconds := 0.0
	if s.started {
		seconds = now.Sub(s.prevAt).Seconds()
	}
	snap.IntervalSeconds = seconds

	cur := make(map[string]*bonding.Bond, len(r.Bonds))
	for i := range r.Bonds {
		b := &r.Bonds[i]
		if !s.follows(b.Name) {
			continue
		}
		cur[b.Name] = b
		prev := s.prev[b.Name]
		if prev != nil {
			snap.Events = append(snap.Events, diffBonds(now, prev, b)...)
		} else if s.started {
			snap.Events = append(snap.Events, Event{Time: now, Bond: b.Name, Kind: EventBondAppeared, Message: b.Name + " appeared"})
		}
		snap.Bonds = append(snap.Bonds, sampleBond(prev, b, seconds))
	}
	for name := range s.prev {
		if cur[name] == nil {
			snap.Events = append(snap.Events, Event{Time: now, Bond: name, Kind: EventBondGone, Message: name + " is gone (deleted, or the bonding driver unloaded)"})
		}
	}
	for _, name := range s.opts.Bonds {
		if cur[name] == nil {
			snap.Missing = append(snap.Missing, name)
		}
	}
	s.prev, s.prevAt, s.started = cur, now, true
	if s.neighbors != nil {
		s.neighbors.attach(snap)
	}
	s.enrich(now, snap, r.Bonds)
	s.hist.Record(snap)
	for _, sink := range s.opts.Sinks {
		sink(snap)
	}
	return snap, nil
}

func (s *Sampler) follows(name string) bool {
	return len(s.opts.Bonds) == 0 || slices.Contains(s.opts.Bonds, name)
}

func sampleBond(prev, cur *bonding.Bond, seconds float64) BondSample {
	bs := BondSample{Bond: *cur}
	bs.Bond.Slaves = nil // BondSample.Slaves carries them, with traffic
	var prevCounters bonding.Counters
	if prev != nil {
		prevCounters = prev.Counters
	}
	bs.Traffic = traffic(prevCounters, prev != nil, cur.Counters, seconds)
	bs.Slaves = make([]SlaveSample, len(cur.Slaves))
	for i := range cur.Slaves {
		sl := &cur.Slaves[i]
		var ps *bonding.Slave
		if prev != nil {
			ps = prev.Slave(sl.Name)
		}
		ss := SlaveSample{Slave: *sl}
		if ps != nil {
			ss.Traffic = traffic(ps.Counters, true, sl.Counters, seconds)
		} else {
			ss.Traffic = traffic(bonding.Counters{}, false, sl.Counters, seconds)
		}
		bs.Slaves[i] = ss
	}
	fillShares(bs.Slaves)
	return bs
}

// Run samples every interval, and at once when a Notifier source reports a
// link change, handing each Snapshot to emit on the Sampler's goroutine.
// emit must not block for long: a UI hands the snapshot to its event loop.
// Run returns nil when ctx ends, or the source's error (the first reading
// failed, or the host became unreadable).
func (s *Sampler) Run(ctx context.Context, emit func(*Snapshot)) error {
	var changes <-chan struct{}
	if n, ok := s.src.(Notifier); ok {
		changes = n.Changes()
	}
	ticker := time.NewTicker(s.Interval())
	defer ticker.Stop()
	for {
		snap, err := s.Sample()
		if err != nil {
			return err
		}
		emit(snap)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-changes:
			ticker.Reset(s.Interval())
		case <-s.intervalChanged:
			ticker.Reset(s.Interval())
		}
	}
}
