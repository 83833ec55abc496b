package ui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
	"github.com/gdamore/tcell/v2"
)

func mustContain(t *testing.T, screen, want string) {
	t.Helper()
	if !strings.Contains(screen, want) {
		t.Fatalf("screen lacks %q:\n%s", want, screen)
	}
}

func mustNotContain(t *testing.T, screen, unwanted string) {
	t.Helper()
	if strings.Contains(screen, unwanted) {
		t.Fatalf("screen shows %q:\n%s", unwanted, screen)
	}
}

// Every size from nothing to large draws without a panic, overlays too:
// a terminal dragged smaller must never take bondtop down.
func TestEverySizeDraws(t *testing.T) {
	h := lacpHost(t, "8023ad-4slaves-e4-unpartnered.txt", []string{"e1", "e2", "e3"})
	s := newSim(t, h, 80, 24, false)
	// Every size around each threshold of the layout, and the extremes.
	widths := []int{0, 1, 2, 3, 5, 9, 10, 11, 20, 39, 40, 41, 59, 60, 61, 80, 120, 161}
	heights := []int{0, 1, 2, 3, 4, 5, 8, 11, 12, 13, 15, 16, 17, 20, 24, 49}
	for _, w := range widths {
		for _, ht := range heights {
			s.screen.SetSize(w, ht)
			s.draw()
		}
	}
	for _, overlay := range []string{overlayHelp, overlayDetails, overlayChooser} {
		s.d.openOverlay(overlay)
		for _, size := range [][2]int{{0, 0}, {1, 1}, {2, 2}, {11, 3}, {12, 4}, {40, 12}, {80, 24}} {
			s.screen.SetSize(size[0], size[1])
			s.draw()
		}
		s.d.closeOverlay()
	}
}

func TestKeys(t *testing.T) {
	h := lacpHost(t, "synthetic-8023ad-6.8-4slaves-root.txt", []string{"e1", "e2", "e3", "e4"})
	s := newSim(t, h, 100, 30, false)

	s.press("?")
	mustContain(t, s.text(), "LACP port state flags")
	s.key(tcell.KeyEscape, 0)
	mustNotContain(t, s.text(), "LACP port state flags")

	s.press("s")
	mustContain(t, s.text(), "sort rx")
	s.press("sss")
	mustContain(t, s.text(), "sort name")
	s.press("s")
	mustContain(t, s.text(), "sort enslave")

	s.press("g")
	mustContain(t, s.text(), "-5m")
	s.press("gg")
	mustContain(t, s.text(), "-1m")

	// Enter opens the details of the row under the cursor; ↓ moves it.
	s.key(tcell.KeyDown, 0)
	s.key(tcell.KeyEnter, 0)
	mustContain(t, s.text(), "slave details")
	mustContain(t, s.text(), "02:ce:7c:39:59:d3") // e2's permanent address
}

func TestPauseHoldsScreenAndEvents(t *testing.T) {
	h := failoverHost(t)
	s := newSim(t, h, 100, 30, false)
	mustContain(t, s.text(), "12:01:00")
	s.press("p")
	mustContain(t, s.text(), "PAUSED")
	// eth0 comes back while paused: the screen stays, the event waits.
	h.Write("proc/net/bonding/bond0", activeBackupProc("eth1", "up", 1))
	h.traffic(time.Second, map[string][2]float64{"eth1": {1e8, 1e8}, "bond0": {1e8, 1e8}})
	s.d.apply([]*model.Snapshot{h.sample(time.Second)})
	s.draw()
	screen := s.text()
	mustContain(t, screen, "12:01:00")
	mustContain(t, screen, "PAUSED, 1 events held")
	mustNotContain(t, screen, "eth0 link down -> up")
	s.press("p")
	screen = s.text()
	mustContain(t, screen, "12:01:01")
	mustContain(t, screen, "eth0 link down -> up")
	mustNotContain(t, screen, "PAUSED")
}

func TestIntervalKeys(t *testing.T) {
	h := failoverHost(t)
	s := newSim(t, h, 100, 30, false)
	s.press("+")
	if got := h.sampler.Interval(); got != 2*time.Second {
		t.Fatalf("after +: interval %v, want 2s", got)
	}
	mustContain(t, s.text(), "every 2s")
	s.press("---")
	if got := h.sampler.Interval(); got != 200*time.Millisecond {
		t.Fatalf("after + - - -: interval %v, want 200ms", got)
	}
	s.press("---")
	if got := h.sampler.Interval(); got != collector.MinInterval {
		t.Fatalf("interval %v, want the floor %v", got, collector.MinInterval)
	}
	mustContain(t, s.text(), "every 100ms")
}

func TestFocusCycles(t *testing.T) {
	h := failoverHost(t)
	s := newSim(t, h, 100, 30, false)
	if !s.d.table.HasFocus() {
		t.Fatal("the slaves table should have focus first")
	}
	for _, want := range []any{s.d.side, s.d.events, s.d.table} {
		s.key(tcell.KeyTab, 0)
		if s.d.app.GetFocus() != want {
			t.Fatalf("Tab gave focus to %T", s.d.app.GetFocus())
		}
	}
	s.key(tcell.KeyBacktab, 0)
	if s.d.app.GetFocus() != s.d.events {
		t.Fatalf("Shift-Tab gave focus to %T", s.d.app.GetFocus())
	}
	// On a tiny screen only the table and the events log are there.
	s.screen.SetSize(40, 12)
	s.draw()
	s.key(tcell.KeyTab, 0)
	if s.d.app.GetFocus() != s.d.table {
		t.Fatalf("40x12: Tab from events gave focus to %T", s.d.app.GetFocus())
	}
}

func TestBondVanishesAndReturns(t *testing.T) {
	h := failoverHost(t)
	s := newSim(t, h, 100, 30, false)
	h.Write("sys/class/net/bonding_masters", "\n")
	h.Remove("proc/net/bonding/bond0")
	s.d.apply([]*model.Snapshot{h.sample(time.Second)})
	s.draw()
	screen := s.text()
	mustContain(t, screen, "GONE since 12:01:01")
	mustContain(t, screen, "bond0 is gone since 12:01:01")
	mustContain(t, screen, "bond0 is gone (deleted, or the bonding")
	mustContain(t, screen, "━eth0") // the graphs keep what was seen

	h.Write("sys/class/net/bonding_masters", "bond0\n")
	h.Write("proc/net/bonding/bond0", activeBackupProc("eth1", "up", 1))
	s.d.apply([]*model.Snapshot{h.sample(time.Second)})
	s.draw()
	screen = s.text()
	mustNotContain(t, screen, "GONE")
	mustContain(t, screen, "bond0 appeared")
	mustContain(t, screen, "eth1")
}

func TestChooseAmongSeveralBonds(t *testing.T) {
	h := newHost(t)
	h.Write("proc/net/bonding/bond0", activeBackupProc("eth0", "up", 0))
	h.procFile("bond1", "8023ad-6.8-healthy-root.txt")
	h.Write("sys/class/net/bonding_masters", "bond0 bond1\n")
	for _, ifname := range []string{"bond0", "bond1", "eth0", "eth1", "e1", "e2"} {
		h.bytes[ifname] = [2]uint64{}
	}
	h.traffic(0, nil)
	h.open(time.Second)
	h.traffic(time.Second, map[string][2]float64{"e1": {1e9, 1e9}, "bond1": {1e9, 1e9}})
	h.sample(time.Second)
	s := newSim(t, h, 100, 30, false)
	mustContain(t, s.text(), "2 bonds: choose one")
	s.press("2")
	screen := s.text()
	mustNotContain(t, screen, "bonds: choose one")
	mustContain(t, screen, "bond1 2/2")
	mustContain(t, screen, "[ ] bond")
	s.press("[")
	mustContain(t, s.text(), "bond0 1/2")
	s.press("]")
	mustContain(t, s.text(), "bond1 2/2")
	s.press("1")
	mustContain(t, s.text(), "bond0 1/2")
}

// NO_COLOR keeps every highlight, by attributes: a missing LACP bit is
// reverse video instead of white on maroon.
func TestNoColorHighlightsByAttribute(t *testing.T) {
	h := lacpHost(t, "8023ad-4slaves-e4-unpartnered.txt", []string{"e1", "e2", "e3"})
	for _, mono := range []bool{false, true} {
		s := newSim(t, h, 100, 30, mono)
		st, ok := s.styleAt("A.G---F.")
		if !ok {
			t.Fatalf("no actor flags on screen:\n%s", s.text())
		}
		_ = st
		missing, _ := s.styleAtOffset("A.G---F.", 3)
		fg, bg, attrs := missing.Decompose()
		if mono {
			if attrs&tcell.AttrReverse == 0 || fg != tcell.ColorDefault || bg != tcell.ColorDefault {
				t.Fatalf("mono: missing bit drawn fg %v bg %v attrs %v; want reverse, no colour", fg, bg, attrs)
			}
		} else if bg != tcell.ColorMaroon {
			t.Fatalf("colour: missing bit background %v, want maroon", bg)
		}
	}
}

// loopRun is the real event loop on a simulated 100x30 terminal, fed by
// the failover fixture's sampler (three snapshots).
type loopRun struct {
	t      *testing.T
	d      *dashboard
	screen tcell.SimulationScreen
	done   chan error
}

func startEventLoop(t *testing.T) *loopRun {
	h := failoverHost(t)
	screen := tcell.NewSimulationScreen("UTF-8")
	feed := &tickingFeed{Sampler: h.sampler, h: h, limit: 3}
	l := &loopRun{t: t, screen: screen, done: make(chan error, 1),
		d: newDashboard(Options{Feed: feed, First: h.snaps[0], Screen: screen})}
	screen.SetSize(100, 30)
	go func() { l.done <- l.d.run(context.Background()) }()
	return l
}

// shows waits until want is on the screen (shown) or gone from it (not
// shown), reading the screen on the event loop, where it is stable.
func (l *loopRun) shows(want string, shown bool) {
	l.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var text string
		l.d.app.QueueUpdate(func() { text = (&sim{screen: l.screen}).text() })
		if strings.Contains(text, want) == shown {
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("%q on screen: %v after 5s, want %v:\n%s", want, !shown, shown, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ended waits for Run to return, after key.
func (l *loopRun) ended(key string) {
	l.t.Helper()
	select {
	case err := <-l.done:
		if err != nil {
			l.t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		l.t.Fatalf("%s did not end Run", key)
	}
}

// The real event loop on a simulated terminal: snapshots arrive from the
// feed's goroutine through QueueUpdateDraw, keys through tcell, and q ends
// Run.
func TestRunLoop(t *testing.T) {
	l := startEventLoop(t)
	l.shows("12:01:03", true) // the three samples after the fixture's 60
	l.screen.InjectKey(tcell.KeyRune, '?', tcell.ModNone)
	l.shows("LACP port state flags", true)
	l.screen.InjectKey(tcell.KeyEscape, 0, tcell.ModNone)
	l.screen.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	l.ended("q")
}

// TestHtopFunctionKeys: the keys an htop user reaches for first do what
// they do in htop: F6 sorts, F1 opens and closes the help, F10 quits from
// anywhere.
func TestHtopFunctionKeys(t *testing.T) {
	l := startEventLoop(t)
	l.shows("sort enslave", true)
	l.screen.InjectKey(tcell.KeyF6, 0, tcell.ModNone)
	l.shows("sort rx", true)
	l.screen.InjectKey(tcell.KeyF1, 0, tcell.ModNone)
	l.shows("LACP port state flags", true)
	l.screen.InjectKey(tcell.KeyF1, 0, tcell.ModNone)
	l.shows("LACP port state flags", false)
	l.screen.InjectKey(tcell.KeyF1, 0, tcell.ModNone)
	l.shows("LACP port state flags", true)
	l.screen.InjectKey(tcell.KeyF10, 0, tcell.ModNone) // from the help, as q does
	l.ended("F10")

	// The bond list takes every key it gets, q included; F10 still quits.
	l = startEventLoop(t)
	l.shows("12:01:03", true)
	l.screen.InjectKey(tcell.KeyRune, 'b', tcell.ModNone)
	l.shows("choose a bond", true)
	l.screen.InjectKey(tcell.KeyF10, 0, tcell.ModNone)
	l.ended("F10 in the bond list")
}

// A source that fails mid-run leaves the last screen up with the reason.
func TestSourceErrorShown(t *testing.T) {
	h := failoverHost(t)
	screen := tcell.NewSimulationScreen("UTF-8")
	feed := &tickingFeed{Sampler: h.sampler, h: h, failAfter: 1}
	d := newDashboard(Options{Feed: feed, First: h.snaps[0], Screen: screen})
	screen.SetSize(100, 30)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var text string
		d.app.QueueUpdate(func() { text = (&sim{screen: screen}).text() })
		if strings.Contains(text, "SAMPLING STOPPED: host unreadable") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no error on screen:\n%s", text)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // as a SIGTERM would: Run ends and restores the terminal
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// tickingFeed runs the fixture host's sampler fast: a sample every 5 ms of
// real time, one second apart on the fake clock.
type tickingFeed struct {
	*collector.Sampler
	h         *host
	failAfter int // return an error after this many samples; 0 never
	limit     int // stop sampling (but keep running) after this many; 0 never
	mu        sync.Mutex
}

func (f *tickingFeed) Interval() time.Duration { return 5 * time.Millisecond }

func (f *tickingFeed) Run(ctx context.Context, emit func(*model.Snapshot)) error {
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Millisecond):
		}
		if f.failAfter > 0 && n > f.failAfter {
			return errors.New("host unreadable")
		}
		if f.limit > 0 && n > f.limit {
			<-ctx.Done()
			return nil
		}
		f.mu.Lock()
		f.h.now = f.h.now.Add(time.Second)
		snap, err := f.Sampler.Sample()
		f.mu.Unlock()
		if err != nil {
			return err
		}
		emit(snap)
	}
}

// Nothing clears the screen between frames (Screen), so whatever an
// older frame left where nothing is drawn now must be blanked, including
// in the selected row, which is restyled as the screen holds it.
func TestNoStaleCellsBetweenFrames(t *testing.T) {
	h := lacpHost(t, "synthetic-8023ad-6.8-4slaves-root.txt", []string{"e1", "e2", "e3", "e4"})
	s := newSim(t, h, 80, 24, false)
	before := s.text()
	// An older frame's leftovers: past the last column of the selected
	// row, and in the middle of the events panel.
	s.d.screen.Clear()
	s.d.screen.Put(78, 4, "Z", tcell.StyleDefault)
	s.d.screen.Put(60, 21, "Z", tcell.StyleDefault)
	s.d.screen.Show()
	s.draw()
	if after := s.text(); after != before {
		t.Fatalf("a stale cell survived a frame:\n%s\nwant\n%s", after, before)
	}
}
