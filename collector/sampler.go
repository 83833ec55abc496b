package collector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/model"
)

// Interval limits: faster than 100 ms the counters' own update cadence in
// many drivers makes rates jitter more than they inform.
const (
	DefaultInterval = time.Second
	MinInterval     = 100 * time.Millisecond
	DefaultHistory  = time.Hour
	// NoHistory as Options.History keeps no rate history.
	NoHistory time.Duration = -1
)

// Options configure a Sampler.
type Options struct {
	// Interval between samples; DefaultInterval when zero.
	Interval time.Duration
	// Bonds to follow, by name; every bond when empty.
	Bonds []string
	// History is how much rate history to keep per series, whatever the
	// pace (SetInterval grows the rings to keep the span): DefaultHistory
	// when zero, none when negative (NoHistory), for modes where nothing
	// reads it.
	History time.Duration
	// Clock returns the current time with a monotonic reading; time.Now
	// when nil. Tests fast-forward it.
	Clock func() time.Time
	// Sinks receive every snapshot, on the sampling goroutine, before
	// Sample returns it: the fan-out to a recorder or a metrics endpoint
	// that should see every mode's snapshots. They must not block.
	Sinks []func(*model.Snapshot)
	// Flows lists the host's sockets for each bond's flow table; when nil,
	// the Source if it is a FlowReader (the demo).
	Flows FlowReader
	// FlowInterval is the time between socket dumps; DefaultFlowInterval
	// when zero.
	FlowInterval time.Duration
	// Meter counts every flow on the followed bonds' slaves (the eBPF
	// meter or its sampled fallback); when nil, the Source if it is a
	// MeterSource (the demo). The Sampler syncs it to the slaves and reads
	// it once per sample; the caller closes it. Each Read must hand out a
	// Reading.Flows of its own: the snapshots point into it.
	Meter flowmeter.Meter
	// MeterEvery, when longer than the pace, is how often the Meter is
	// read (the dashboard: DashboardMeterEvery); zero: every sample,
	// as a JSON line or a recording at any pace wants them.
	MeterEvery time.Duration
	// MeterWhy says why there is no Meter (no privileges, --no-ebpf and
	// no fallback): each bond's traffic then says "sockets" and this.
	MeterWhy string
	// Neighbors tells each slave's LLDP/CDP neighbour; when nil, the Source
	// if it is a NeighborReader (the live source, the demo).
	Neighbors NeighborReader
	// Analyze, when set, runs on every snapshot before it is recorded or
	// handed out, and fills BondSample.Findings (diagnose.Window.Fill).
	Analyze func(*model.Snapshot)
	// Wake, when set, makes Run sample at once whenever it delivers (a
	// /metrics scrape that wants fresh counters), without moving the
	// ticker: the pace of the diagnosis and of everything else stays the
	// interval's.
	Wake <-chan struct{}
	// Recycle says that the snapshots' consumer hands back (Release)
	// those it is done with, and that no sink keeps one past its call:
	// a later tick fills them again, and a steady tick allocates nothing.
	Recycle bool
	// StayUp makes the host's state at the first read news rather than a
	// mistake, for an exporter that must serve on any host: no bonding
	// driver gives an empty snapshot with NoBonding set, and a followed
	// bond that is not there is listed in Missing, as they would be later
	// on. Without it the first Sample returns ErrNoBonding or a
	// *NotFoundError, which a command run by hand should report.
	StayUp bool
}

// Sampler reads a Source and turns consecutive readings into Snapshots.
// Sample, Run and Intervals must not be called concurrently; History,
// Interval and SetInterval may be called from any goroutine.
type Sampler struct {
	src  Source
	opts Options
	hist *History
	// prevCountersAt is when prev's counters were read (Reading.CountersAge),
	// and prevAt when its snapshot was made, for counters with an age of
	// their own (bonding.Counters.Age); both on the Sampler's clock.
	prevCountersAt, prevAt time.Time
	// prev is the reading of the last snapshot, by bond name: the base of
	// its rates. last is the latest reading of any kind, the base of
	// events; it runs ahead of prev when Intervals reads a link change
	// between two snapshots, and pending holds what that reading found
	// until the next snapshot.
	// Both are whole readings' bonds, followed or not: a lookup asks
	// only for followed names.
	prev    []bonding.Bond
	last    []bonding.Bond
	pending []model.Event
	started bool
	// interval is the pace in force (nanoseconds): a UI changes it from its
	// own goroutine while Run ticks, so it is atomic, and intervalChanged
	// wakes Run to re-arm its ticker.
	interval        atomic.Int64
	intervalChanged chan struct{}
	// pace judges whether the ticks keep the interval (see judgePace).
	pace pace
	// trackers add the parts of a sample beyond the bonds' readings, in
	// order (tracker.go); tick is what they share while one runs.
	trackers []tracker
	tick     tick
	flows    *flowTracker // nil without a FlowReader; its kernel is hashKernel's
	kernel   *bonding.KernelVersion
	relay    Relay // nil unless the Source relays another bondtop's view
	// backfilled names the bonds whose past a Backfiller source was
	// asked for (Focus).
	backfillMu sync.Mutex
	backfilled map[string]bool
	// snaps are the snapshots lent and handed back (Options.Recycle);
	// unlent makes the arrays of one that is not.
	snaps  snapshotStore
	unlent lentSnapshot
}

// NewSampler makes a Sampler over src.
func NewSampler(src Source, opts Options) *Sampler {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Interval < MinInterval {
		opts.Interval = MinInterval
	}
	if opts.History == 0 {
		opts.History = DefaultHistory
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	s := &Sampler{
		src:             src,
		opts:            opts,
		intervalChanged: make(chan struct{}, 1),
	}
	s.interval.Store(int64(opts.Interval))
	if opts.History > 0 {
		s.hist = NewHistory(opts.History, opts.Interval)
	}
	s.trackers = s.buildTrackers(src, opts)
	s.relay, _ = src.(Relay)
	return s
}

// Focus tells a Focuser source which bond is on screen (nothing for
// other sources). It may be called from any goroutine.
func (s *Sampler) Focus(bond string) {
	if f, ok := s.src.(Focuser); ok {
		f.Focus(bond)
	}
	if b, ok := s.src.(Backfiller); ok && bond != "" && s.hist != nil {
		s.backfill(b, bond)
	}
}

// backfill puts, once per bond, the past a Backfiller holds in front of
// the bond's history, off the caller's goroutine (the dashboard's): the
// source may take seconds to answer. A failure lets the next Focus try
// again.
func (s *Sampler) backfill(b Backfiller, bond string) {
	s.backfillMu.Lock()
	defer s.backfillMu.Unlock()
	if s.backfilled[bond] {
		return
	}
	if s.backfilled == nil {
		s.backfilled = map[string]bool{}
	}
	s.backfilled[bond] = true
	now := s.opts.Clock()
	go func() {
		times, samples, err := b.Past(context.Background(), bond, now.Add(-s.opts.History), now)
		if err != nil {
			s.backfillMu.Lock()
			delete(s.backfilled, bond)
			s.backfillMu.Unlock()
			return
		}
		s.hist.Prepend(bond, times, samples)
	}()
}

// Interval is the sampling interval in force.
func (s *Sampler) Interval() time.Duration { return time.Duration(s.interval.Load()) }

// SetInterval changes the time between samples (at least MinInterval) and
// returns the interval now in force. Run, if running, samples at once and
// then keeps the new pace. The history grows to keep its span at a faster
// pace (and keeps what it holds at a slower one).
func (s *Sampler) SetInterval(d time.Duration) time.Duration {
	d = max(d, MinInterval)
	if s.hist != nil {
		s.hist.Pace(d)
	}
	if time.Duration(s.interval.Swap(int64(d))) != d {
		select {
		case s.intervalChanged <- struct{}{}:
		default: // Run has a wake-up pending already
		}
	}
	return d
}

// History is the rate history of every series the Sampler has seen (nil
// with NoHistory).
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
// checks that every requested bond exists (a *NotFoundError if not, unless
// Options.StayUp); later calls report a vanished bond as an event instead.
func (s *Sampler) Sample() (*model.Snapshot, error) {
	r, err := s.read()
	if err != nil {
		return nil, err
	}
	return s.sampleReading(r)
}

// read reads the source. Once the Sampler has started (from the first read
// with Options.StayUp), a driver that went away leaves an empty reading: every bond is gone, which is news for the
// user, not a reason to stop watching.
func (s *Sampler) read() (Reading, error) {
	r, err := s.src.Read()
	if errors.Is(err, ErrNoBonding) && (s.started || s.opts.StayUp) {
		return Reading{Warnings: []string{err.Error()}, NoBonding: true}, nil
	}
	return r, err
}

func (s *Sampler) sampleReading(r Reading) (*model.Snapshot, error) {
	now := s.opts.Clock()
	if !s.started && !s.opts.StayUp {
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
	// Events is never nil: JSON consumers get [] rather than null. Those
	// read between ticks come first, with their own times.
	snap, arrays := s.newSnapshot()
	snap.Time = now
	arrays.startLists(snap, s.pending, r.Warnings)
	defer arrays.keep(snap)
	s.pending = s.pending[:0]
	snap.Unprivileged, snap.NoBonding, snap.ReadWarnings = r.Unprivileged, r.NoBonding, len(r.Warnings)
	if r.Unprivileged {
		snap.Notes = append(snap.Notes, "not root: the LACP system priority and MAC and each slave's LACPDU details (partner system, keys, ports) need CAP_NET_ADMIN (run bondtop with sudo to see them)")
	}
	span := countersSpan{prevAt: s.prevAt, prevCountersAt: s.prevCountersAt,
		at: now, countersAt: now.Add(-r.CountersAge), started: s.started}
	seconds := span.reading()
	snap.IntervalSeconds = seconds
	if s.pace.judge {
		s.pace.judge = false
		s.judgePace(snap, seconds)
	}

	snap.Events = s.compare(snap.Events, now, r)
	s.sampleBonds(snap, arrays, r, span)
	if s.relay != nil {
		relayed(snap, s.relay, now)
	}
	for _, name := range s.opts.Bonds {
		if r.Bond(name) == nil {
			snap.Missing = append(snap.Missing, name)
		}
	}
	s.hold(r.Bonds, r.Bonds)
	s.prevCountersAt, s.prevAt, s.started = span.countersAt, now, true
	s.track(now, snap, r.Bonds, arrays)
	if s.hist != nil {
		s.hist.Record(snap)
	}
	for _, sink := range s.opts.Sinks {
		sink(snap)
	}
	return snap, nil
}

// newSnapshot returns an empty Snapshot and where its arrays come from:
// one handed back (Options.Recycle), else new ones.
func (s *Sampler) newSnapshot() (*model.Snapshot, *lentSnapshot) {
	if s.opts.Recycle {
		return s.snaps.take()
	}
	// A snapshot that is not filled again gets new arrays every tick;
	// the slot that makes them is the Sampler's own, cleared (the
	// trackers' tick holds it, so a new one would be an allocation).
	s.unlent = lentSnapshot{}
	return new(model.Snapshot), &s.unlent
}

// Release hands back a snapshot this Sampler made, once its consumer
// (and whoever it passed the snapshot to) no longer reads it: a later
// tick fills it again. It does nothing without Options.Recycle, or for a
// snapshot made too long ago (it is then left to the garbage collector).
// It may be called from any goroutine.
func (s *Sampler) Release(snap *model.Snapshot) {
	if s.opts.Recycle {
		s.snaps.release(snap)
	}
}

// compare appends to evs the events that turn the latest reading into r,
// stamped at.
func (s *Sampler) compare(evs []model.Event, at time.Time, r Reading) []model.Event {
	for i := range r.Bonds {
		b := &r.Bonds[i]
		if !s.follows(b.Name) {
			continue
		}
		if last := bondNamed(s.last, b.Name); last != nil {
			evs = appendBondDiff(evs, at, last, b)
		} else if s.started {
			evs = append(evs, model.Event{Time: at, Bond: b.Name, Kind: model.EventBondAppeared, Message: b.Name + " appeared"})
		}
	}
	for i := range s.last {
		name := s.last[i].Name
		if s.follows(name) && r.Bond(name) == nil {
			evs = append(evs, model.Event{Time: at, Bond: name, Kind: model.EventBondGone, Message: name + " is gone (deleted, or the bonding driver unloaded)"})
		}
	}
	return evs
}

// prevBond is the followed bond called name in the reading of the last
// snapshot, or nil.
func (s *Sampler) prevBond(name string) *bonding.Bond { return bondNamed(s.prev, name) }

// observe reads the source between two snapshots, when a link notification
// announced a change: the events it finds, stamped now, wait for the next
// snapshot, whose rates still run from the previous one. Nothing else of
// the reading is kept (its counters and warnings are the next tick's to
// read), and no sink sees it.
func (s *Sampler) observe() error {
	if !s.started {
		return nil // the first snapshot has nothing to compare with yet
	}
	r, err := s.read()
	if err != nil {
		return err
	}
	s.pending = s.compare(s.pending, s.opts.Clock(), r)
	s.hold(s.prev, r.Bonds)
	return nil
}

// hold makes prev and last the readings the next tick compares with (the
// previous snapshot's, and the latest, which a change read in between
// makes newer), and hands those it let go back to a source that reuses
// them (Recycler).
func (s *Sampler) hold(prev, last []bonding.Bond) {
	oldPrev, oldLast := s.prev, s.last
	s.prev, s.last = prev, last
	rc, ok := s.src.(Recycler)
	if !ok {
		return
	}
	held := func(bonds []bonding.Bond) bool { return sameArray(bonds, prev) || sameArray(bonds, last) }
	if !held(oldPrev) {
		rc.Recycle(oldPrev)
	}
	if !held(oldLast) && !sameArray(oldLast, oldPrev) {
		rc.Recycle(oldLast)
	}
}

func (s *Sampler) follows(name string) bool {
	return len(s.opts.Bonds) == 0 || slices.Contains(s.opts.Bonds, name)
}

// sampleBonds turns the followed bonds of a reading into the snapshot's
// BondSamples: one array for the bonds, one for all their slaves, and the
// few of numbers for their traffic, whatever the number of bonds.
func (s *Sampler) sampleBonds(snap *model.Snapshot, arrays *lentSnapshot, r Reading, span countersSpan) {
	bonds, slaves, rooms := 0, 0, 0
	for i := range r.Bonds {
		if s.follows(r.Bonds[i].Name) {
			bonds++
			slaves += len(r.Bonds[i].Slaves)
			rooms += roomsFor(len(r.Bonds[i].Slaves))
		}
	}
	if bonds == 0 {
		return
	}
	snap.Bonds = arrays.bondsFor(bonds)
	all := arrays.slavesFor(slaves)
	nums := arrays.numbersFor(rooms)
	for i := range r.Bonds {
		b := &r.Bonds[i]
		if !s.follows(b.Name) {
			continue
		}
		n := len(b.Slaves)
		snap.Bonds = append(snap.Bonds, model.BondSample{})
		sampleBond(&snap.Bonds[len(snap.Bonds)-1], nums, s.prevBond(b.Name), b, all[:n:n], span)
		all = all[n:]
	}
}

// countersSpan times the counters of two consecutive readings on the
// Sampler's clock: a reading's counters were read CountersAge before its
// snapshot, except those that carry an age of their own.
type countersSpan struct {
	prevAt, prevCountersAt time.Time // the previous snapshot, its reading's counters
	at, countersAt         time.Time // this one
	started                bool      // there is a previous snapshot
}

// reading is the seconds between the two readings' counters; zero for
// the first.
func (sp countersSpan) reading() float64 {
	if !sp.started {
		return 0
	}
	return sp.countersAt.Sub(sp.prevCountersAt).Seconds()
}

// between is the seconds between an interface's counters in the previous
// reading and in this one.
func (sp countersSpan) between(prev, cur *bonding.Counters) float64 {
	if !sp.started {
		return 0
	}
	from, to := sp.prevCountersAt, sp.countersAt
	if age, ok := prev.Age(); ok {
		from = sp.prevAt.Add(-age)
	}
	if age, ok := cur.Age(); ok {
		to = sp.at.Add(-age)
	}
	return to.Sub(from).Seconds()
}

// sampleBond fills bs, zero, with cur's sample, in place (a BondSample
// is some 570 bytes), and slaves (as many as cur has).
func sampleBond(bs *model.BondSample, nums *numbers, prev, cur *bonding.Bond, slaves []model.SlaveSample, span countersSpan) {
	bs.Bond = *cur
	bs.Bond.Slaves = nil // BondSample.Slaves carries them, with traffic
	var prevCounters *bonding.Counters
	if prev != nil {
		prevCounters = &prev.Counters
	} else {
		prevCounters = &bonding.Counters{}
	}
	bs.Traffic = traffic(nums, prevCounters, prev != nil, &cur.Counters, span.between(prevCounters, &cur.Counters))
	bs.Slaves = slaves
	for i := range cur.Slaves {
		sl := &cur.Slaves[i]
		var ps *bonding.Slave
		if prev != nil {
			ps = prev.Slave(sl.Name)
		}
		// Filled in place: a SlaveSample is some 400 bytes.
		ss := &bs.Slaves[i]
		*ss = model.SlaveSample{}
		ss.Slave = *sl
		if ps != nil {
			ss.Traffic = traffic(nums, &ps.Counters, true, &sl.Counters, span.between(&ps.Counters, &sl.Counters))
		} else {
			ss.Traffic = traffic(nums, &bonding.Counters{}, false, &sl.Counters, 0)
		}
	}
	fillShares(nums, bs.Slaves)
}

// After a link notification the kernel goes on changing what no
// notification announces: an 802.3ad port's LACP states follow a lost
// link at the pace of the driver's state machine (every 100 ms), a few
// hundred milliseconds later. So Run and Intervals re-read every
// settleStep until settleWindow has passed since the last notification:
// such a change gets a time within settleStep of when it happened instead
// of waiting for the next tick (up to a whole interval).
const (
	settleStep   = 100 * time.Millisecond
	settleWindow = time.Second
)

// Run samples every interval until ctx ends, and at once when a Notifier
// source reports a link change: such a snapshot shows the change when the
// kernel announced it, and the next interval starts from it. A re-read
// after a change (see settleStep) that finds more events makes a snapshot
// too. Run hands each Snapshot to emit on the Sampler's goroutine; emit
// must not block for long (a UI hands the snapshot to its event loop). A
// Sampler that has sampled already (Sample checked the bonds) waits for
// the interval, or a change, before its first snapshot, so that one has
// rates over a whole interval. Run returns nil when ctx ends, or the
// source's error (the first reading failed, or the host became
// unreadable).
func (s *Sampler) Run(ctx context.Context, emit func(*model.Snapshot)) error {
	return s.run(ctx, 0, false, emit)
}

// Intervals is Run for output whose every snapshot covers one interval
// (--count, --once): it emits n snapshots (until ctx ends when n <= 0), one
// interval apart. A link change between two of them is read at once, as
// Run does (and re-read while it settles), but its events, stamped when
// they were read, go into the next snapshot, whose rates still cover the
// whole interval.
func (s *Sampler) Intervals(ctx context.Context, n int, emit func(*model.Snapshot)) error {
	return s.run(ctx, n, true, emit)
}

// run is the loop of Run (fold false: a change is a snapshot) and
// Intervals (fold true: a change's events wait for the next tick).
func (s *Sampler) run(ctx context.Context, n int, fold bool, emit func(*model.Snapshot)) error {
	var changes <-chan struct{}
	if nt, ok := s.src.(Notifier); ok {
		changes = nt.Changes()
	}
	ticker := time.NewTicker(s.Interval())
	defer ticker.Stop()
	settleTimer := time.NewTimer(settleStep)
	settleTimer.Stop()
	defer settleTimer.Stop()
	var settle <-chan time.Time // nil while no change is settling
	var settleUntil time.Time
	sample := !s.started
	for emitted := 0; ; {
		if sample {
			snap, err := s.Sample()
			if err != nil {
				return err
			}
			emit(snap)
			if emitted++; n > 0 && emitted >= n {
				return nil
			}
		}
		sample = false
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			sample = true
			s.pace.judge = true
		case <-changes:
			settleUntil = time.Now().Add(settleWindow)
			settleTimer.Reset(settleStep)
			settle = settleTimer.C
			if fold {
				if err := s.observe(); err != nil {
					return err
				}
				continue
			}
			ticker.Reset(s.Interval())
			sample = true
		case <-settle:
			if time.Now().Before(settleUntil) {
				settleTimer.Reset(settleStep)
			} else {
				settle = nil
			}
			if err := s.observe(); err != nil {
				return err
			}
			if !fold && len(s.pending) > 0 {
				ticker.Reset(s.Interval())
				sample = true
			}
		case <-s.intervalChanged:
			ticker.Reset(s.Interval())
			sample = true
			s.pace = pace{}
		case <-s.opts.Wake:
			sample = true
		}
	}
}

// pace follows how far apart the ticker's snapshots come. A tick whose
// work (read, rates, diagnosis) outlasts the interval delays the next
// one, and a Go ticker drops the ticks it could not deliver: the pace
// stretches silently. behindAfter late ticks in a row (a loaded machine
// delays one now and then) make it news.
type pace struct {
	judge    bool    // the snapshot being made was due to the ticker
	late     int     // ticker snapshots in a row that came late
	achieved float64 // their mean interval, seconds
	warned   bool    // the warning was given for this interval
}

const (
	behindAfter = 10
	lateFactor  = 1.25
)

// judgePace marks snap Behind when the ticks no longer keep the interval,
// and warns once per interval asked for.
func (s *Sampler) judgePace(snap *model.Snapshot, seconds float64) {
	asked := s.Interval()
	if seconds < lateFactor*asked.Seconds() {
		s.pace.late, s.pace.achieved = 0, 0
		return
	}
	s.pace.late++
	s.pace.achieved += (seconds - s.pace.achieved) / float64(min(s.pace.late, behindAfter))
	if s.pace.late < behindAfter {
		return
	}
	achieved := time.Duration(s.pace.achieved * float64(time.Second)).Round(time.Millisecond)
	snap.Behind = achieved
	if !s.pace.warned {
		s.pace.warned = true
		snap.Warnings = append(snap.Warnings, fmt.Sprintf(
			"sampling cannot keep the %v interval: snapshots come every %v (reading and diagnosing %d bonds takes longer); rates stay exact, over the longer intervals; a longer --interval, or fewer bonds (bondtop BOND), keeps the pace",
			asked, achieved, len(snap.Bonds)))
	}
}
