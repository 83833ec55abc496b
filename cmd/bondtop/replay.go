package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/record"
)

// startRecording opens --record FILE and returns the sink that appends
// every snapshot, and a finish function that closes the file and returns
// the first write error (a full disk must not go unnoticed).
func startRecording(path string, o options) (sink func(*collector.Snapshot), finish func() error, err error) {
	host, _ := os.Hostname()
	w, err := record.Create(path, record.Header{Started: time.Now(), Host: host, Version: buildVersion(), Interval: o.interval.Seconds()})
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	var writeErr error
	sink = func(s *collector.Snapshot) {
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

// replay plays a recording in the mode the flags ask for. --json prints
// the recorded lines exactly as they were written; a damaged file prints
// what it holds, then the error.
func replay(o options, stdout, stderr io.Writer) error {
	rec, readErr := record.Read(o.replay)
	if rec == nil || len(rec.Entries) == 0 {
		if readErr == nil {
			readErr = fmt.Errorf("%s holds no snapshots", o.replay)
		}
		return readErr
	}
	entries := rec.Entries
	switch {
	case o.once || o.count > 0:
		n := max(o.count, 1)
		if n > len(entries) {
			n = len(entries)
		}
		for i, e := range entries[:n] {
			if o.json {
				fmt.Fprintf(stdout, "%s\n", e.Raw)
				continue
			}
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			_ = printSnapshot(stdout, e.Snapshot)
		}
		if o.count > len(entries) && readErr == nil {
			fmt.Fprintf(stderr, "bondtop: %s holds %d snapshots, fewer than --count %d\n", o.replay, len(entries), o.count)
		}
		return readErr
	}
	if isTerminal(stdout) {
		if err := replayDashboard(newReplayFeed(entries, o.speed, readErr), o); err != nil {
			return err
		}
		return readErr
	}
	// Not a terminal: print the recording at its pace, once.
	for i, e := range entries {
		if i > 0 {
			time.Sleep(time.Duration(float64(e.Snapshot.Time.Sub(entries[i-1].Snapshot.Time)) / o.speed))
		}
		fmt.Fprintf(stdout, "--- %s\n", e.Snapshot.Time.Format("2006-01-02 15:04:05.000"))
		_ = printSnapshot(stdout, e.Snapshot)
	}
	return readErr
}

// replayFeed plays recorded snapshots at their recorded pace divided by
// speed. It is the dashboard's Feed for --replay, and a ui.Player: p pauses
// the playback itself, and seeking jumps through the recording. The history
// the graphs read is rebuilt from the recording up to the position, so a
// jump back shows the graphs as they were then.
type replayFeed struct {
	entries  []record.Entry
	speed    float64
	interval time.Duration
	warning  string // a damaged file's error, shown on the last snapshot
	hist     atomic.Pointer[collector.History]

	mu     sync.Mutex
	pos    int  // index of the snapshot on screen
	paused bool // the user paused playback
	jumped bool // a seek moved pos: Run shows entries[pos] at once
	wake   chan struct{}
}

func newReplayFeed(entries []record.Entry, speed float64, readErr error) *replayFeed {
	interval := collector.DefaultInterval
	if len(entries) > 1 {
		if d := entries[1].Snapshot.Time.Sub(entries[0].Snapshot.Time); d > 0 {
			interval = d
		}
	}
	f := &replayFeed{entries: entries, speed: speed, interval: interval, wake: make(chan struct{}, 1)}
	if readErr != nil {
		f.warning = readErr.Error()
	}
	f.hist.Store(f.historyUpTo(0))
	return f
}

// historyUpTo builds the graphs' history from the first snapshot to entry i.
func (f *replayFeed) historyUpTo(i int) *collector.History {
	h := collector.NewHistory(collector.DefaultHistory, max(f.interval, collector.MinInterval))
	for j := range i + 1 {
		h.Record(f.shown(f.entries[j].Snapshot, j == len(f.entries)-1))
	}
	return h
}

// shown is the snapshot as the dashboard gets it: the last one of a damaged
// recording carries the read error as a warning.
func (f *replayFeed) shown(s *collector.Snapshot, last bool) *collector.Snapshot {
	if !last || f.warning == "" {
		return s
	}
	copied := *s // recorded snapshots stay as they were
	copied.Warnings = append(append([]string(nil), s.Warnings...), f.warning)
	return &copied
}

// First is the first recorded snapshot.
func (f *replayFeed) First() *collector.Snapshot {
	return f.shown(f.entries[0].Snapshot, len(f.entries) == 1)
}

// Run plays the snapshots after the first until ctx ends, waiting while
// paused or at the end of the recording (a seek back plays again).
func (f *replayFeed) Run(ctx context.Context, emit func(*collector.Snapshot)) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		f.mu.Lock()
		if f.jumped {
			f.jumped = false
			i := f.pos
			f.mu.Unlock()
			emit(f.shown(f.entries[i].Snapshot, i == len(f.entries)-1))
			continue
		}
		var wait time.Duration = -1 // -1: nothing to play until woken
		next := f.pos + 1
		if !f.paused && next < len(f.entries) {
			wait = time.Duration(float64(f.entries[next].Snapshot.Time.Sub(f.entries[f.pos].Snapshot.Time)) / f.speed)
			wait = max(wait, 0)
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
		f.pos = next
		s := f.shown(f.entries[next].Snapshot, next == len(f.entries)-1)
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

// Seek moves the playback by d of recorded time (negative: back) and shows
// the snapshot there at once.
func (f *replayFeed) Seek(d time.Duration) {
	f.mu.Lock()
	target := f.entries[f.pos].Snapshot.Time.Add(d)
	i := sort.Search(len(f.entries), func(i int) bool { return !f.entries[i].Snapshot.Time.Before(target) })
	if d < 0 && i > 0 && f.entries[min(i, len(f.entries)-1)].Snapshot.Time.After(target) {
		i-- // back: the last snapshot at or before the target
	}
	i = min(max(i, 0), len(f.entries)-1)
	if i != f.pos {
		f.pos, f.jumped = i, true
		f.hist.Store(f.historyUpTo(i))
	}
	f.mu.Unlock()
	f.poke()
}

// Position says where the playback is: the snapshot shown and how many
// there are.
func (f *replayFeed) Position() (index, total int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pos, len(f.entries)
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
