package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/bondtop/bondtop/load"
	"github.com/bondtop/bondtop/loadrun"
	"github.com/bondtop/bondtop/model"
)

// The header says when sampling cannot keep the interval, with the pace
// it keeps, and stops saying it once the pace is kept again.
func TestHeaderShowsSamplingBehind(t *testing.T) {
	h := lacpHost(t, "synthetic-8023ad-6.8-4slaves-root.txt", []string{"e1", "e2", "e3", "e4"})
	s := newSim(t, h, 120, 30, false)
	mustNotContain(t, s.text(), "BEHIND")
	late := *h.snaps[len(h.snaps)-1]
	late.Behind = 1340 * time.Millisecond
	s.d.apply([]*model.Snapshot{&late})
	s.draw()
	mustContain(t, s.text(), "BEHIND: every 1.34s")
	kept := late
	kept.Behind = 0
	s.d.apply([]*model.Snapshot{&kept})
	s.draw()
	mustNotContain(t, s.text(), "BEHIND")
}

// A load test running with its panel hidden shows in the header, with
// its rates; with the panel open the panel says it.
func TestHeaderShowsHiddenLoadTest(t *testing.T) {
	h, src := demoHost(t, 40)
	s := demoSim(t, h, 120, 30, false)
	p := s.d.loadp
	p.runner = loadrun.Demo{Source: src}
	p.req.Config = load.Config{Target: "10.20.0.100", Streams: 2, Duration: 10 * time.Second}
	p.run = &loadrun.Run{Bond: "bond0"}
	p.editing = false
	p.elapsed = 3 * time.Second
	p.sent = load.StreamStats{Bytes: 1 << 30, BitsPerSecond: 2e9}
	s.draw()
	header := headerOf(s)
	if !strings.Contains(header, "LOAD 3s tx 2") {
		t.Fatalf("header lacks the running test: %q", header)
	}
	s.press("l")
	if header := headerOf(s); strings.Contains(header, "LOAD") {
		t.Fatalf("header repeats the test the panel shows: %q", header)
	}
	s.key(tcell.KeyEscape, 0)
	p.done = true
	s.draw()
	if header := headerOf(s); strings.Contains(header, "LOAD") {
		t.Fatalf("a finished test still in the header: %q", header)
	}
}

// headerOf is the header's two lines.
func headerOf(s *sim) string {
	lines := strings.SplitN(s.text(), "\n", 3)
	return lines[0] + "\n" + lines[1]
}
