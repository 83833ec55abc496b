package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/internal/filekind"
	"github.com/bondtop/bondtop/internal/printable"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/record"
)

// startRecording opens --record FILE and returns the sink that appends
// every snapshot, and a finish function that closes the file and returns
// the first write error (a full disk must not go unnoticed).
func startRecording(path string, o options) (sink func(*model.Snapshot), finish func() error, err error) {
	host, _ := os.Hostname()
	w, err := record.Create(path, record.Header{Started: time.Now(), Host: host, Version: buildVersion(), Interval: o.interval.Seconds()})
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	var writeErr error
	sink = func(s *model.Snapshot) {
		mu.Lock()
		defer mu.Unlock()
		if writeErr == nil {
			writeErr = w.Write(limitFlows(s, o.top))
		}
	}
	finish = func() error {
		mu.Lock()
		defer mu.Unlock()
		if err := w.Close(); writeErr == nil {
			writeErr = err
		}
		return writeErr
	}
	return sink, finish, nil
}

// replay plays a recording in the mode the flags ask for, reading it as
// it goes: memory does not grow with the file. --json prints the recorded
// lines exactly as they were written (all of them without --once or
// --count); a damaged file prints what it holds up to the damage, then the
// error.
func replay(o options, stdout, stderr io.Writer) error {
	if o.once || o.count > 0 || o.json || !isTerminal(stdout) {
		rd, err := record.Open(o.replay)
		if err != nil {
			return err
		}
		defer rd.Close()
		if o.once || o.count > 0 || o.json {
			return replayPrint(rd, o, stdout, stderr)
		}
		return replayPaced(rd, o, stdout)
	}
	feed, err := newReplayFeed(o.replay, o.speed)
	if err != nil {
		return err
	}
	defer feed.Close()
	if err := replayDashboard(feed, o); err != nil {
		return err
	}
	return feed.readErr
}

// replayPrint prints the first snapshot (--once), the first N (--count),
// or, for --json alone, every one. The baseline reading a recorded run
// starts with (interval_s 0, no rates yet, followed by rated snapshots)
// is skipped: the live run that recorded it never printed it, and the
// replay prints what it did.
func replayPrint(rd *record.Reader, o options, stdout, stderr io.Writer) error {
	n := max(o.count, 1)
	if o.json && !o.once && o.count == 0 {
		n = math.MaxInt
	}
	var held *record.Entry // the first entry, while it may be a baseline
	printed := 0
	print := func(e *record.Entry) {
		printed++
		if o.json {
			// A recording from another host may hold raw controls.
			fmt.Fprintf(stdout, "%s\n", printable.JSON(e.Raw))
			return
		}
		if printed > 1 {
			fmt.Fprintln(stdout)
		}
		_ = printSnapshot(stdout, e.Snapshot)
	}
	for printed < n {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if held != nil {
				print(held)
			}
			return err
		}
		switch {
		case rd.Read() == 1 && e.Snapshot.IntervalSeconds == 0:
			held = &e
			continue
		case held != nil && e.Snapshot.IntervalSeconds == 0:
			print(held) // not a run's baseline: a recording without rates
		}
		held = nil
		if printed < n {
			print(&e)
		}
	}
	if held != nil && printed < n {
		print(held) // the recording's only snapshot
	}
	if printed == 0 {
		return fmt.Errorf("%s holds no snapshots", o.replay)
	}
	if o.count > printed {
		fmt.Fprintf(stderr, "bondtop: %s holds %d snapshots, fewer than --count %d\n", o.replay, printed, o.count)
	}
	return nil
}

// replayPaced prints the recording at its pace, once (stdout is not a
// terminal). A long stretch without snapshots (the recorder was stopped,
// or the host slept) is skipped, not waited through.
func replayPaced(rd *record.Reader, o options, stdout io.Writer) error {
	var prev time.Time
	for {
		e, err := rd.Next()
		if err == io.EOF {
			if rd.Read() == 0 {
				return fmt.Errorf("%s holds no snapshots", o.replay)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if rd.Read() > 1 {
			wait, skipped := replayWait(e.Time.Sub(prev), rd.Header())
			if skipped {
				fmt.Fprintf(stdout, "--- no snapshots for %v (skipped)\n", e.Time.Sub(prev).Round(time.Second))
			}
			time.Sleep(time.Duration(float64(wait) / o.speed))
		}
		prev = e.Time
		fmt.Fprintf(stdout, "--- %s\n", e.Time.Format("2006-01-02 15:04:05.000"))
		_ = printSnapshot(stdout, e.Snapshot)
	}
}

// replayWait is how long a replay waits, in recorded time, for a
// snapshot that came gap after the one before it: the gap itself, unless
// it is much longer than the recording's interval, when the recorder was
// not running (a new session appended later, a host that slept); then
// one interval, and skipped is true.
func replayWait(gap time.Duration, h *record.Header) (wait time.Duration, skipped bool) {
	interval := collector.DefaultInterval
	if h != nil && h.Interval > 0 {
		interval = time.Duration(h.Interval * float64(time.Second))
	}
	if gap > max(time.Minute, 3*interval) {
		return interval, true
	}
	return max(gap, 0), false
}

// replayFeed plays a recording at its recorded pace divided by speed. It
// is the dashboard's Feed for --replay, and a ui.Player: p pauses the
// playback itself, and seeking jumps through the recording. It holds the
// time of every snapshot (8 bytes each, for seeking) and reads the
// snapshots themselves from the file as they are played; the history the
// graphs read is rebuilt from the recording up to the position, so a jump
// back shows the graphs as they were then.
type replayFeed struct {
	path     string
	speed    float64
	interval time.Duration
	times    []int64 // Unix nanoseconds of every playable snapshot
	header   record.Header
	readErr  error  // a damaged file's error: the snapshots after it are not played
	warning  string // readErr, shown on the last snapshot
	first    *model.Snapshot
	hist     atomic.Pointer[collector.History]

	// The file as Run reads it: rd's next snapshot is number rdNext.
	rd     *record.Reader
	rdNext int

	mu     sync.Mutex
	pos    int  // index of the snapshot on screen
	paused bool // the user paused playback
	jumped bool // a seek moved pos: Run shows snapshot pos at once
	wake   chan struct{}
}

// newReplayFeed reads the recording once for the times of its snapshots
// (checking them) and opens it for playing.
func newReplayFeed(path string, speed float64) (*replayFeed, error) {
	f := &replayFeed{path: path, speed: speed, interval: collector.DefaultInterval, wake: make(chan struct{}, 1)}
	// Seeking reopens the file: a pipe would be empty the second time.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("--replay %s is %s: the dashboard jumps through a recording, so it needs a regular file (--count N prints from a pipe)", path, filekind.Of(st.Mode()))
	}
	rd, err := record.Open(path)
	if err != nil {
		return nil, err
	}
	rd.TimesOnly = true
	for {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.readErr, f.warning = err, err.Error()
			break
		}
		f.times = append(f.times, e.Time.UnixNano())
		if len(f.times) == 1 {
			f.header = *rd.Header()
		}
	}
	rd.Close()
	if len(f.times) == 0 {
		if f.readErr == nil {
			f.readErr = fmt.Errorf("%s holds no snapshots", path)
		}
		return nil, f.readErr
	}
	if len(f.times) > 1 {
		if d := time.Duration(f.times[1] - f.times[0]); d > 0 {
			f.interval = d
		}
	}
	h, first, err := f.historyUpTo(0)
	if err != nil {
		f.Close()
		return nil, err
	}
	f.first = first
	f.hist.Store(h)
	return f, nil
}

// Close releases the file.
func (f *replayFeed) Close() error {
	if f.rd == nil {
		return nil
	}
	return f.rd.Close()
}

// snapshot reads snapshot i as the dashboard gets it: played forward it
// is the next line of the open file; a jump back opens the file again.
// Only Run's goroutine (and the constructor) call it.
func (f *replayFeed) snapshot(i int) (*model.Snapshot, error) {
	if f.rd == nil || i < f.rdNext {
		if f.rd != nil {
			f.rd.Close()
		}
		rd, err := record.Open(f.path)
		if err != nil {
			return nil, err
		}
		f.rd, f.rdNext = rd, 0
	}
	if err := f.rd.Skip(i - f.rdNext); err != nil {
		return nil, err
	}
	e, err := f.rd.Next()
	if err != nil {
		return nil, err // a line whose time read well but whose snapshot does not, or a file changed since
	}
	f.rdNext = i + 1
	return f.shown(e.Snapshot, i == len(f.times)-1), nil
}

// historyUpTo builds the graphs' history from the recording up to
// snapshot i, reading only the snapshots the history keeps, and returns
// it with snapshot i.
func (f *replayFeed) historyUpTo(i int) (*collector.History, *model.Snapshot, error) {
	h := collector.NewHistory(collector.DefaultHistory, max(f.interval, collector.MinInterval))
	from := sort.Search(i, func(j int) bool { return f.times[j] >= f.times[i]-int64(collector.DefaultHistory) })
	var s *model.Snapshot
	for j := from; j <= i; j++ {
		var err error
		if s, err = f.snapshot(j); err != nil {
			return nil, nil, err
		}
		h.Record(s)
	}
	return h, s, nil
}

// shown is the snapshot as the dashboard gets it: the last one of a damaged
// recording carries the read error as a warning.
func (f *replayFeed) shown(s *model.Snapshot, last bool) *model.Snapshot {
	if last && f.warning != "" {
		s.Warnings = append(s.Warnings, f.warning)
	}
	return s
}

// First is the first recorded snapshot.
func (f *replayFeed) First() *model.Snapshot { return f.first }

// Run plays the snapshots after the first until ctx ends, waiting while
// paused or at the end of the recording (a seek back plays again).
func (f *replayFeed) Run(ctx context.Context, emit func(*model.Snapshot)) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		f.mu.Lock()
		if f.jumped {
			f.jumped = false
			i := f.pos
			f.mu.Unlock()
			h, s, err := f.historyUpTo(i)
			if err != nil {
				return err
			}
			f.hist.Store(h)
			emit(s)
			continue
		}
		var wait time.Duration = -1 // -1: nothing to play until woken
		next := f.pos + 1
		if !f.paused && next < len(f.times) {
			gap, _ := replayWait(time.Duration(f.times[next]-f.times[f.pos]), &f.header)
			wait = time.Duration(float64(gap) / f.speed)
		}
		f.mu.Unlock()

		var fire <-chan time.Time
		if wait >= 0 {
			timer.Reset(wait)
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.wake:
			if !timer.Stop() && fire != nil {
				<-timer.C
			}
			continue
		case <-fire:
		}
		f.mu.Lock()
		if f.jumped || f.paused || f.pos+1 != next {
			f.mu.Unlock()
			continue // a seek or pause arrived while waiting
		}
		f.mu.Unlock()
		s, err := f.snapshot(next)
		if err != nil {
			return err
		}
		f.mu.Lock()
		if f.jumped || f.paused || f.pos+1 != next {
			f.mu.Unlock()
			continue // a seek or pause arrived while reading
		}
		f.pos = next
		f.mu.Unlock()
		f.hist.Load().Record(s)
		emit(s)
	}
}

// Pause stops or resumes the playback.
func (f *replayFeed) Pause(paused bool) {
	f.mu.Lock()
	f.paused = paused
	f.mu.Unlock()
	f.poke()
}

// Seek moves the playback by d of recorded time (negative: back); Run
// shows the snapshot there at once.
func (f *replayFeed) Seek(d time.Duration) {
	f.mu.Lock()
	target := f.times[f.pos] + int64(d)
	i := sort.Search(len(f.times), func(i int) bool { return f.times[i] >= target })
	if d < 0 && i > 0 && f.times[min(i, len(f.times)-1)] > target {
		i-- // back: the last snapshot at or before the target
	}
	i = min(max(i, 0), len(f.times)-1)
	if i != f.pos {
		f.pos, f.jumped = i, true
	}
	f.mu.Unlock()
	f.poke()
}

// Position says where the playback is: the snapshot shown and how many
// there are.
func (f *replayFeed) Position() (index, total int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pos, len(f.times)
}

func (f *replayFeed) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *replayFeed) History() *collector.History { return f.hist.Load() }
func (f *replayFeed) Interval() time.Duration     { return f.interval }

// SetInterval cannot change a recording's pace; the interval stays.
func (f *replayFeed) SetInterval(time.Duration) time.Duration { return f.interval }

// errReplayFlags is returned for flags that do not apply to a recording.
var errReplayFlags = errors.New("--replay reads a file: it excludes --demo, --root, --listen and --record")
