package ui

import (
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
)

// fakePlayer is a recording's feed as the dashboard sees it: it notes the
// pause and seek requests.
type fakePlayer struct {
	*collector.Sampler
	paused []bool
	seeks  []time.Duration
}

func (p *fakePlayer) Pause(v bool)         { p.paused = append(p.paused, v) }
func (p *fakePlayer) Seek(d time.Duration) { p.seeks = append(p.seeks, d) }

// TestReplayKeys: with a Player feed, p pauses the playback itself, < and >
// seek, and a snapshot arriving while paused (the seek's) is shown at once.
func TestReplayKeys(t *testing.T) {
	h := failoverHost(t)
	feed := &fakePlayer{Sampler: h.sampler}
	screen := tcell.NewSimulationScreen("UTF-8")
	d := newDashboard(Options{Feed: feed, First: h.snaps[0], Screen: screen})
	screen.SetSize(100, 30)
	s := &sim{t: t, d: d, screen: screen}
	d.apply(h.snaps[1:])
	s.draw()
	s.press("p")
	s.press("<")
	s.press(">")
	s.press(",")
	if len(feed.paused) != 1 || !feed.paused[0] {
		t.Fatalf("pause requests %v, want [true]", feed.paused)
	}
	if want := []time.Duration{-seekStep, seekStep, -seekStep}; len(feed.seeks) != 3 || feed.seeks[0] != want[0] || feed.seeks[1] != want[1] || feed.seeks[2] != want[2] {
		t.Fatalf("seeks %v, want %v", feed.seeks, want)
	}
	// The seek's snapshot arrives while paused: shown, not held.
	d.apply([]*model.Snapshot{h.sample(time.Second)})
	s.draw()
	mustContain(t, s.text(), "12:01:01")
	s.press("?")
	mustContain(t, s.text(), "replay: 10 s back / forward")
}
