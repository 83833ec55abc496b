package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
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
			writeErr = w.Write(s)
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
	feed := newReplayFeed(entries, o.speed, readErr)
	if isTerminal(stdout) {
		if err := replayDashboard(feed, o); err != nil {
			return err
		}
		return readErr
	}
	err := feed.Run(context.Background(), func(s *collector.Snapshot) {
		fmt.Fprintf(stdout, "--- %s\n", s.Time.Format("2006-01-02 15:04:05.000"))
		_ = printSnapshot(stdout, s)
	})
	if err != nil {
		return err
	}
	return readErr
}

// replayFeed plays recorded snapshots at their recorded pace divided by
// speed. It is the dashboard's Feed for --replay: the history the graphs
// read is rebuilt from the snapshots as they are played.
type replayFeed struct {
	entries  []record.Entry
	speed    float64
	interval time.Duration
	hist     *collector.History
	warning  string // a damaged file's error, shown on the last snapshot
}

func newReplayFeed(entries []record.Entry, speed float64, readErr error) *replayFeed {
	interval := collector.DefaultInterval
	if len(entries) > 1 {
		if d := entries[1].Snapshot.Time.Sub(entries[0].Snapshot.Time); d > 0 {
			interval = d
		}
	}
	f := &replayFeed{entries: entries, speed: speed, interval: interval,
		hist: collector.NewHistory(collector.DefaultHistory, max(interval, collector.MinInterval))}
	if readErr != nil {
		f.warning = readErr.Error()
	}
	return f
}

// First is the first recorded snapshot, already in the history.
func (f *replayFeed) First() *collector.Snapshot {
	s := f.entries[0].Snapshot
	f.hist.Record(s)
	return s
}

// Run plays the snapshots after the first; it returns when they are all
// played or ctx ends.
func (f *replayFeed) Run(ctx context.Context, emit func(*collector.Snapshot)) error {
	for i := 1; i < len(f.entries); i++ {
		s := f.entries[i].Snapshot
		wait := time.Duration(float64(s.Time.Sub(f.entries[i-1].Snapshot.Time)) / f.speed)
		if wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		if i == len(f.entries)-1 && f.warning != "" {
			copied := *s // recorded snapshots stay as they were
			copied.Warnings = append(append([]string(nil), s.Warnings...), f.warning)
			s = &copied
		}
		f.hist.Record(s)
		emit(s)
	}
	<-ctx.Done() // keep the last picture on screen until the user quits
	return nil
}

func (f *replayFeed) History() *collector.History { return f.hist }
func (f *replayFeed) Interval() time.Duration     { return f.interval }

// SetInterval cannot change a recording's pace; the interval stays.
func (f *replayFeed) SetInterval(time.Duration) time.Duration { return f.interval }

// errReplayFlags is returned for flags that do not apply to a recording.
var errReplayFlags = errors.New("--replay reads a file: it excludes --demo, --root, --listen and --record")
