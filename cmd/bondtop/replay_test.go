package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/record"
)

// recordedDemo records n snapshots of the demo one second apart and
// returns the file's path.
func recordedDemo(t *testing.T, n int) string {
	t.Helper()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := collector.NewSampler(demo.New(clock), collector.Options{Clock: clock})
	path := filepath.Join(t.TempDir(), "r")
	w, err := record.Create(path, record.Header{Interval: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		snap, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(snap); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayFeedPauseSeek plays a 60 s recording at 1000x, pauses it, seeks
// back and forward, and checks what the dashboard would be handed.
func TestReplayFeedPauseSeek(t *testing.T) {
	f, err := newReplayFeed(recordedDemo(t, 60), 1000)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *model.Snapshot, 100)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- f.Run(ctx, func(s *model.Snapshot) { got <- s }) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
		f.Close()
	}()
	t0 := f.First().Time
	at := func(s *model.Snapshot) time.Duration { return s.Time.Sub(t0) }
	next := func() *model.Snapshot {
		t.Helper()
		select {
		case s := <-got:
			return s
		case <-time.After(5 * time.Second):
			t.Fatal("no snapshot within 5 s")
			return nil
		}
	}
	// It plays in order, one recorded second per millisecond.
	for want := time.Second; want <= 5*time.Second; want += time.Second {
		if s := next(); at(s) != want {
			t.Fatalf("played %v, want %v", at(s), want)
		}
	}
	f.Pause(true)
	time.Sleep(20 * time.Millisecond)
	for len(got) > 0 {
		<-got // what was in flight when the pause came
	}
	time.Sleep(50 * time.Millisecond)
	if len(got) != 0 {
		t.Fatalf("%d snapshots played while paused", len(got))
	}
	idx, _ := f.Position()
	f.Seek(-3 * time.Second)
	if s := next(); at(s) != time.Duration(idx-3)*time.Second {
		t.Fatalf("seek back 3 s from %d s showed %v", idx, at(s))
	}
	if pts := f.History().Since(collector.Series{Bond: "bond0", Tx: true}, t0); len(pts) != idx-3+1 {
		t.Fatalf("history after seeking back has %d points, want %d", len(pts), idx-3+1)
	}
	f.Seek(time.Hour) // past the end: the last snapshot
	if s := next(); at(s) != 59*time.Second {
		t.Fatalf("seek past the end showed %v", at(s))
	}
	f.Pause(false)
	time.Sleep(50 * time.Millisecond)
	if len(got) != 0 {
		t.Fatal("played past the end of the recording")
	}
}

// TestReplayFeedStopsAtImpossibleTime: the dashboard plays a recording up
// to a snapshot whose time goes back; the last one it plays carries the
// error, and replay returns it when the dashboard ends.
func TestReplayFeedStopsAtImpossibleTime(t *testing.T) {
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	path := writeTimedRecording(t, t0, t0.Add(time.Second), t0.Add(2*time.Second), t0)
	f, err := newReplayFeed(path, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, total := f.Position(); total != 3 || f.readErr == nil || !strings.Contains(f.readErr.Error(), "line 5: impossible timestamp") {
		t.Fatalf("%d snapshots to play, error %v", total, f.readErr)
	}
	got := make(chan *model.Snapshot, 10)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- f.Run(ctx, func(s *model.Snapshot) { got <- s }) }()
	var last *model.Snapshot
	for range 2 {
		select {
		case last = <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("the feed does not play")
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if !last.Time.Equal(t0.Add(2*time.Second)) || len(last.Warnings) == 0 || !strings.Contains(last.Warnings[len(last.Warnings)-1], "earlier than the one before it") {
		t.Fatalf("last played %v with warnings %q", last.Time, last.Warnings)
	}
}
