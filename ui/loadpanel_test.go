package ui

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/load"
	"github.com/bondtop/bondtop/loadrun"
	"github.com/gdamore/tcell/v2"
)

// typeField replaces the form's focused text field with text.
func (s *sim) typeField(text string) {
	s.key(tcell.KeyCtrlU, 0)
	s.press(text)
}

// A host that is not a host name, or a rate that is not a rate, is an
// inline error, and nothing starts.
func TestLoadFormValidation(t *testing.T) {
	h, src := demoHost(t, 5)
	s := demoSim(t, h, 80, 24, false)
	s.d.loadp.runner = loadrun.Demo{Source: src}
	s.press("l")
	screen := s.text()
	mustContain(t, screen, "New load test over bond0")
	mustContain(t, screen, "10.20.0.100") // the demo's peer, filled in
	mustContain(t, screen, "5201")
	mustContain(t, screen, "‹ spread over slaves ›")

	s.typeField("bad host!")
	s.key(tcell.KeyEnter, 0)
	mustContain(t, s.text(), `✗ target: "bad host!" is not a host name or address`)
	if s.d.loadp.starting || s.d.loadp.gen != 0 {
		t.Fatal("a bad host started a test")
	}
	s.typeField("10.20.0.100")
	for range fieldRate {
		s.key(tcell.KeyDown, 0)
	}
	s.typeField("fast")
	s.key(tcell.KeyEnter, 0)
	mustContain(t, s.text(), `✗ rate bit/s: rate "fast": want bits per second`)
	if s.d.loadp.starting || s.d.loadp.gen != 0 {
		t.Fatal("a bad rate started a test")
	}
	// Typing fixes it: the error goes at the next key.
	s.typeField("100M")
	mustNotContain(t, s.text(), "✗")
	// Streams out of range, and the chooser of strategies: one per slave.
	s.key(tcell.KeyUp, 0)
	s.key(tcell.KeyUp, 0)
	s.key(tcell.KeyUp, 0)
	s.key(tcell.KeyUp, 0)
	s.typeField("0")
	s.key(tcell.KeyEnter, 0)
	mustContain(t, s.text(), `✗ streams: "0": give a whole number from 1 to`)
	s.d.loadp.field = fieldStrategy
	s.key(tcell.KeyRight, 0)
	mustContain(t, s.text(), "‹ one slave: ens1f0 ›")
	s.key(tcell.KeyEscape, 0)
	mustNotContain(t, s.text(), "New load test")
}

// Without a runner (--root, --replay) the panel says why.
func TestLoadUnavailable(t *testing.T) {
	h := failoverHost(t)
	s := newSim(t, h, 100, 30, false)
	s.d.loadp.unavailable = "A recording replays what was."
	s.press("l")
	mustContain(t, s.text(), "Load test: not available here")
	mustContain(t, s.text(), "A recording replays what was.")
	s.key(tcell.KeyEscape, 0)
}

// loop is a dashboard on the real tview event loop and a simulated
// terminal, fed by the fixture host's sampler.
type loop struct {
	t      *testing.T
	d      *dashboard
	screen tcell.SimulationScreen
	done   chan error
}

func startLoop(t *testing.T, h *host, o Options) *loop {
	t.Helper()
	screen := tcell.NewSimulationScreen("UTF-8")
	o.Feed = &tickingFeed{Sampler: h.sampler, h: h}
	o.First, o.Screen = h.snaps[len(h.snaps)-1], screen
	d := newDashboard(o)
	screen.SetSize(120, 40)
	l := &loop{t: t, d: d, screen: screen, done: make(chan error, 1)}
	go func() { l.done <- d.run(context.Background()) }()
	t.Cleanup(func() {
		screen.InjectKey(tcell.KeyCtrlC, 0, tcell.ModNone)
		select {
		case <-l.done:
		case <-time.After(10 * time.Second):
			t.Error("the dashboard did not stop")
		}
	})
	return l
}

func (l *loop) read() string {
	var text string
	l.d.app.QueueUpdate(func() { text = (&sim{screen: l.screen}).text() })
	return text
}

func (l *loop) waitFor(timeout time.Duration, want ...string) string {
	l.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		text := l.read()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(text, w)
		}
		if ok {
			return text
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("no %q on screen after %v:\n%s", want, timeout, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *loop) keys(keys ...any) {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			for _, r := range k {
				l.screen.InjectKey(tcell.KeyRune, r, tcell.ModNone)
			}
		case tcell.Key:
			l.screen.InjectKey(k, 0, tcell.ModNone)
		}
	}
}

// A test from the panel against bondtop's own server on loopback: the
// streams show, the summary stays in the panel and goes to the events
// log. A second test while one runs asks first; a port where nothing
// listens is "refused" in words.
func TestLoadPanelAgainstServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- (&load.Server{}).Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-served })
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)

	h := failoverHost(t)
	l := startLoop(t, h, Options{Bond: "bond0", Load: loadrun.Live{}})
	l.keys("l")
	l.waitFor(5*time.Second, "New load test over bond0")
	// target, then the duration: 2 s; the rate: 200 Mbit/s per stream.
	l.keys("127.0.0.1:"+port, tcell.KeyDown, tcell.KeyDown, tcell.KeyDown, tcell.KeyCtrlU, "0",
		tcell.KeyDown, tcell.KeyDown, tcell.KeyDown, "200M", tcell.KeyEnter)
	screen := l.waitFor(10*time.Second, "load: 4 tcp send streams → 127.0.0.1:"+port, "running", "#1 ", "#5 ", "tx ")
	// The route to 127.0.0.1 is lo, not the bond: spread cannot apply.
	if !strings.Contains(screen, "cannot spread") && !strings.Contains(screen, "not placed") && !strings.Contains(screen, "not bond0") {
		t.Errorf("no word on why the streams are not placed:\n%s", screen)
	}
	// A second test while this one runs: asked first; n keeps it.
	l.keys("n")
	l.waitFor(5*time.Second, "A test is running: Enter asks")
	l.keys(tcell.KeyEnter)
	l.waitFor(5*time.Second, "Stop it and start the new one?")
	l.keys("n")
	l.waitFor(5*time.Second, "running")
	// x stops it cleanly: the summary stays, the log has it.
	l.keys("x")
	screen = l.waitFor(15*time.Second, "done", "load test to 127.0.0.1:"+port+": 4 tcp streams")
	if !strings.Contains(screen, "stopped") {
		t.Errorf("a stopped test should say so:\n%s", screen)
	}
	var logged bool
	l.d.app.QueueUpdate(func() {
		for _, e := range l.d.model.Events {
			logged = logged || e.Kind == EventLoadTest && strings.Contains(e.Message, "4 tcp streams")
		}
	})
	if !logged {
		t.Error("the summary is not in the events log")
	}
	// Nothing listens on the port next to the server: refused, in words.
	l.keys("n", tcell.KeyCtrlU, "127.0.0.1:1", tcell.KeyEnter)
	l.waitFor(15*time.Second, "refused")
	// The server busy with another client's test: busy, in words.
	other, err := load.Start(ctx, load.Config{Target: "127.0.0.1", Port: uint16(ln.Addr().(*net.TCPAddr).Port), UntilStopped: true, Rate: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Wait()
	defer other.Stop()
	for other.Phase() != load.Running {
		select {
		case <-other.Done():
			_, err := other.Result()
			t.Fatalf("the other client's test ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	l.keys("n", tcell.KeyCtrlU, "127.0.0.1:"+port, tcell.KeyEnter)
	l.waitFor(15*time.Second, "busy: the server runs another test")
}

// Under --demo the streams go into the simulation: hashed onto the
// simulated slaves, counted in the flow table, and the panel's summary
// names where they went.
func TestLoadPanelDemo(t *testing.T) {
	h, src := demoHost(t, 5)
	l := startLoop(t, h, Options{Bond: "bond0", Load: loadrun.Demo{Source: src}})
	l.keys("l")
	l.waitFor(5*time.Second, "New load test over bond0", "10.20.0.100")
	l.keys(tcell.KeyEnter)
	// layer2 hashes no port: the four streams to one peer share a slave,
	// and the panel says so.
	screen := l.waitFor(10*time.Second, "via bond0", "cannot spread", "does not hash ports", "load test to 10.20.0.100:5201: 4 tcp streams")
	if !strings.Contains(screen, "slaves' counters meanwhile (all traffic): ens1f0 tx") {
		t.Errorf("the summary should give each slave's bytes during the test:\n%s", screen)
	}
	if !strings.Contains(screen, "streams per slave: ens") || !strings.Contains(screen, " 4") {
		t.Errorf("the summary should put all four streams on one slave:\n%s", screen)
	}
}

// The form as the admin first sees it under --demo.
func TestGoldenLoadForm(t *testing.T) {
	h, src := demoHost(t, 40)
	s := demoSim(t, h, 80, 24, false)
	s.d.loadp.runner = loadrun.Demo{Source: src}
	s.press("l")
	s.goldenPanel("demo-load-form-80x24")
}

// A finished test docked under the graphs draws at every size: where the
// screen has no room beside the graphs it becomes an overlay.
func TestLoadDockedEverySize(t *testing.T) {
	h, src := demoHost(t, 40)
	s := demoSim(t, h, 80, 24, false)
	p := s.d.loadp
	p.runner = loadrun.Demo{Source: src}
	p.req.Config = load.Config{Target: "10.20.0.100", Streams: 2, Duration: 10 * time.Second}
	info := []load.StreamInfo{{ID: 1, Sender: true, SourcePort: 40001, PredictedSlave: "ens1f0"}, {ID: 3, Sender: true, SourcePort: 40002, PredictedSlave: "ens2f1"}}
	p.run = &loadrun.Run{Bond: "bond0", Notes: []string{"a note long enough to wrap on a narrow terminal, and then some more words"}}
	p.rows = []load.StreamStats{{StreamInfo: info[0], BitsPerSecond: 1e9}, {StreamInfo: info[1], BitsPerSecond: 2e9}}
	p.editing = false
	s.press("l")
	mustContain(t, s.text(), "#1  :40001 ens1f0")
	mustContain(t, s.text(), "#3  :40002 ens2f1")
	mustContain(t, s.text(), "TX bit/s") // the graphs stay
	p.done = true
	p.summary = &load.Summary{Duration: 10 * time.Second, Streams: []load.StreamSummary{{StreamInfo: info[0], BitsPerSecond: 1e9}, {StreamInfo: info[1], BitsPerSecond: 2e9}}}
	for _, size := range [][2]int{{0, 0}, {1, 1}, {11, 3}, {12, 4}, {40, 12}, {59, 20}, {60, 20}, {80, 24}, {160, 48}} {
		s.screen.SetSize(size[0], size[1])
		s.draw()
	}
	mustContain(t, s.text(), "streams per slave: ens1f0 1, ens2f1 1")
}
