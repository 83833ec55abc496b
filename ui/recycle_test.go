package ui

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/load"
	"github.com/bondtop/bondtop/loadrun"
	"github.com/bondtop/bondtop/model"
)

// recyclingDemo is a Sampler over the demo that fills again the
// snapshots handed back to it, on a clock the test moves.
func recyclingDemo(t *testing.T) (s *collector.Sampler, sample func() *model.Snapshot) {
	now := start
	clock := func() time.Time { return now }
	s = collector.NewSampler(demo.New(clock), collector.Options{
		Interval: time.Second, Clock: clock, Recycle: true, History: collector.NoHistory})
	return s, func() *model.Snapshot {
		t.Helper()
		now = now.Add(time.Second)
		snap, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
}

func snapJSON(t *testing.T, s *model.Snapshot) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestModelHandsBackWhatItNoLongerShows: the snapshot replaced on screen
// goes back to the Sampler and the next tick fills it, while the one on
// screen during a pause, and the one held behind it, are never written.
func TestModelHandsBackWhatItNoLongerShows(t *testing.T) {
	s, sample := recyclingDemo(t)
	m := NewModel(time.Second)
	m.release = s.Release

	s1 := sample()
	m.Apply(s1)
	m.Apply(sample())
	s3 := sample()
	if s3 != s1 {
		t.Fatalf("the snapshot replaced on screen was not handed back")
	}
	m.Apply(s3)

	m.TogglePause()
	onScreen := snapJSON(t, m.Snap)
	h1 := sample()
	m.Apply(h1) // held
	h2 := sample()
	m.Apply(h2) // held in h1's place: h1 goes back
	if n := sample(); n != h1 {
		t.Errorf("a held snapshot replaced by a newer one was not handed back")
	} else {
		m.Apply(n)
	}
	heldJSON := snapJSON(t, m.held)
	for range 4 {
		sample() // lent, never shown: the store makes new ones
	}
	if m.Snap != s3 || snapJSON(t, m.Snap) != onScreen {
		t.Errorf("the snapshot on screen changed during the pause")
	}
	if snapJSON(t, m.held) != heldJSON {
		t.Errorf("the held snapshot changed during the pause")
	}
	m.TogglePause()
	if n := sample(); n != s3 && n != h2 {
		t.Errorf("after the pause neither the old screen's snapshot nor the one the held replaced came back")
	}
}

// TestModelKeepsAGoneBondsSnapshot: a bond that went away keeps its last
// sample on screen (graphs' legend, bond list), so its snapshot is not
// handed back until the bond is sampled again.
func TestModelKeepsAGoneBondsSnapshot(t *testing.T) {
	var back []*model.Snapshot
	m := NewModel(time.Second)
	m.release = func(s *model.Snapshot) { back = append(back, s) }
	bonds := func(names ...string) *model.Snapshot {
		s := &model.Snapshot{Time: start}
		for _, n := range names {
			s.Bonds = append(s.Bonds, model.BondSample{Bond: bonding.Bond{Name: n}})
		}
		return s
	}
	both, one, again := bonds("bond0", "bond1"), bonds("bond0"), bonds("bond0", "bond1")
	m.Apply(both)
	m.Apply(one)
	if len(back) != 0 {
		t.Fatalf("handed back %d snapshots while bond1's last sample is in the first", len(back))
	}
	m.Bond = "bond1"
	if b := m.LastSeen(); b != &both.Bonds[1] {
		t.Fatalf("bond1's last sample is %p, want the first snapshot's %p", b, &both.Bonds[1])
	}
	m.Apply(again)
	if len(back) != 2 || !slices.Contains(back, both) || !slices.Contains(back, one) {
		t.Errorf("once bond1 is back, handed back %v, want both earlier snapshots", back)
	}
	m.Apply(bonds("bond0", "bond1"))
	if len(back) != 3 || back[2] != again {
		t.Errorf("handed back %v, want the replaced one last", back)
	}
}

// countingFeed passes a recycling Sampler to the dashboard and counts
// the different snapshots it emits.
type countingFeed struct {
	*collector.Sampler
	mu      sync.Mutex
	seen    map[*model.Snapshot]bool
	emitted int
}

func (f *countingFeed) Run(ctx context.Context, emit func(*model.Snapshot)) error {
	return f.Sampler.Run(ctx, func(s *model.Snapshot) {
		f.mu.Lock()
		f.seen[s] = true
		f.emitted++
		f.mu.Unlock()
		emit(s)
	})
}

// TestEventLoopHandsBackSnapshots runs the dashboard's event loop on a
// recycling Sampler over the demo at 100 ms, with keys that pause,
// resume, sort and open panels: the snapshots come back and are filled
// again (a few different ones for a few dozen ticks; a loop that falls
// behind by more than the Sampler remembers makes a few more), and under
// -race a widget reading a snapshot after it was handed back would be
// reported.
func TestEventLoopHandsBackSnapshots(t *testing.T) {
	s := collector.NewSampler(demo.New(time.Now), collector.Options{
		Interval: collector.MinInterval, Recycle: true, History: time.Minute})
	first, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	feed := &countingFeed{Sampler: s, seen: map[*model.Snapshot]bool{}}
	screen := tcell.NewSimulationScreen("UTF-8")
	l := &loopRun{t: t, screen: screen, done: make(chan error, 1),
		d: newDashboard(Options{Feed: feed, First: first, Screen: screen, Bond: "bond0"})}
	screen.SetSize(120, 40)
	go func() { l.done <- l.d.run(context.Background()) }()
	l.shows("bond0", true)
	for _, k := range []rune{'p', 's', 'p', 'f', 'f', 'd', 'd', 's'} {
		time.Sleep(300 * time.Millisecond)
		l.screen.InjectKey(tcell.KeyRune, k, tcell.ModNone)
	}
	time.Sleep(300 * time.Millisecond)
	l.screen.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	l.ended("q")
	feed.mu.Lock()
	defer feed.mu.Unlock()
	t.Logf("%d ticks, %d different snapshots", feed.emitted, len(feed.seen))
	if n := len(feed.seen); 2*n > feed.emitted {
		t.Errorf("%d ticks made %d different snapshots, want the ones handed back filled again", feed.emitted, n)
	}
}

// heldRunner is a LoadRunner that keeps the bond it is started with and
// reads it again when told: the panel's runner reads it off the event
// loop, for as long as DNS and the route take.
type heldRunner struct {
	started chan string // the bond's JSON as Start got it
	reread  chan chan string
}

func (r *heldRunner) Start(_ context.Context, b *model.BondSample, _ loadrun.Request) (*loadrun.Run, error) {
	asJSON := func() string {
		out, err := json.Marshal(b)
		if err != nil {
			return err.Error()
		}
		return string(out)
	}
	r.started <- asJSON()
	(<-r.reread) <- asJSON()
	return nil, errors.New("held runner: no test")
}

// TestLoadRunnerGetsABondOfItsOwn: while the load panel's runner starts
// (off the event loop), snapshots keep coming and those handed back are
// filled again; the bond the runner was given must not change under it.
func TestLoadRunnerGetsABondOfItsOwn(t *testing.T) {
	s, sample := recyclingDemo(t)
	runner := &heldRunner{started: make(chan string, 1), reread: make(chan chan string)}
	d := newDashboard(Options{Feed: s, First: sample(), Bond: "bond0", Load: runner,
		Screen: tcell.NewSimulationScreen("UTF-8")})
	d.loadp.req = loadrun.Request{Config: load.Config{Target: "10.20.0.100"}}
	d.startLoad()
	before := <-runner.started
	for range 5 {
		d.apply([]*model.Snapshot{sample()}) // each hands back the one before
	}
	answer := make(chan string)
	runner.reread <- answer
	if after := <-answer; after != before {
		t.Errorf("the runner's bond changed while it started:\nbefore %s\nafter  %s", before, after)
	}
}
