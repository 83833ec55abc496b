package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/internal/bondtree"
	"github.com/bondtop/bondtop/internal/natural"
	"github.com/bondtop/bondtop/model"
)

// manyBonds is the dashboard of manyBondsHost at 120x40.
func manyBonds(t *testing.T) *sim {
	t.Helper()
	return newSim(t, manyBondsHost(t), 120, 40, false)
}

// manyBondsHost is a host of 64 802.3ad bonds over two slaves each,
// bond7's second slave without link, sampled twice (with the diagnosis)
// so rates and findings are there.
func manyBondsHost(t *testing.T) *host {
	t.Helper()
	h := newHost(t)
	tr, err := bondtree.Write(h.Dir, 64, 2)
	if err != nil {
		t.Fatal(err)
	}
	proc := filepath.Join(h.Dir, "proc/net/bonding/bond7")
	text, err := os.ReadFile(proc)
	if err != nil {
		t.Fatal(err)
	}
	down := strings.Replace(string(text), "Slave Interface: b7s2\nMII Status: up", "Slave Interface: b7s2\nMII Status: down", 1)
	if err := os.WriteFile(proc, []byte(down), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := rootdir.New(h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	h.sampler = collector.NewSampler(src, collector.Options{Interval: time.Second, Clock: func() time.Time { return h.now }, Analyze: diagnose.NewWindow(0).Fill})
	h.sample(0)
	if err := tr.Advance(); err != nil {
		t.Fatal(err)
	}
	h.sample(time.Second)
	return h
}

// With a source's order (the fleet's, worst first) the list follows it,
// the bonds it lacks after the rest in natural order; the order is asked
// for once a snapshot, not at every draw and key (ranking 10 000 names
// takes milliseconds), and a new snapshot brings the new order.
func TestBondListSourceOrder(t *testing.T) {
	h := manyBondsHost(t)
	order := []string{"bond40", "bond7", "bond3"}
	asked := 0
	screen := tcell.NewSimulationScreen("UTF-8")
	d := newDashboard(Options{Feed: h.sampler, First: h.snaps[0], Screen: screen,
		ListOrder: func() []string { asked++; return order }})
	screen.SetSize(120, 40)
	d.apply(h.snaps[1:])
	s := &sim{t: t, d: d, screen: screen}
	s.draw()
	inOrder := func(names ...string) {
		t.Helper()
		screen, at := s.text(), -1
		for _, name := range names {
			i := strings.Index(screen, " "+name+" ")
			if i <= at {
				t.Fatalf("%v: %s out of the source's order:\n%s", names, name, screen)
			}
			at = i
		}
	}
	inOrder("bond40", "bond7", "bond3", "bond1", "bond2", "bond10")

	before := asked
	for range 5 {
		s.key(tcell.KeyDown, 0)
	}
	s.draw()
	if asked != before {
		t.Errorf("the source's order was asked for %d times over 5 keys and 6 draws, want none before the next snapshot", asked-before)
	}

	order = []string{"bond64"}
	d.apply([]*model.Snapshot{h.sample(time.Second)})
	s.draw()
	inOrder("bond64", "bond1", "bond2")
}

// The bond list past one screen: natural order, a cursor that stays on
// screen, pages, a filter, and b to come back.
func TestBondListManyBonds(t *testing.T) {
	s := manyBonds(t)
	screen := s.text()
	mustContain(t, screen, "64 bonds: choose one")
	if i2, i10 := strings.Index(screen, " bond2 "), strings.Index(screen, " bond10 "); i2 < 0 || i10 < 0 || i2 > i10 {
		t.Fatalf("bond2 should come before bond10:\n%s", screen)
	}
	// Each row: mode, slaves up of total, tx, rx, worst finding.
	row := lineWith(t, screen, " bond7 ")
	for _, want := range []string{"802.3ad", "1/2", "WARN"} {
		if !strings.Contains(row, want) && !(want == "WARN" && strings.Contains(row, "CRIT")) {
			t.Errorf("bond7's row lacks %q: %q", want, row)
		}
	}
	if row := lineWith(t, screen, " bond3 "); !strings.Contains(row, "2/2") || !strings.Contains(row, "M") {
		t.Errorf("bond3's row lacks slaves up or rates: %q", row)
	}

	// Down 46 times: the cursor (bond47) is on screen, highlighted.
	for range 46 {
		s.key(tcell.KeyDown, 0)
	}
	if st, ok := s.styleAt(" bond47 "); !ok || st != *s.d.th.selected {
		t.Fatalf("bond47 not on screen under the cursor:\n%s", s.text())
	}
	// PgDn moves a page, not to the last bond.
	s.key(tcell.KeyPgDn, 0)
	if _, ok := s.styleAt(" bond64 "); !ok {
		t.Fatalf("a page down from bond47 should show the end:\n%s", s.text())
	}
	s.key(tcell.KeyPgUp, 0)
	s.key(tcell.KeyPgUp, 0)
	if st, ok := s.styleAt(" bond47 "); ok && st == *s.d.th.selected {
		t.Fatalf("two pages up still on bond47:\n%s", s.text())
	}
	s.key(tcell.KeyEnter, 0)
	picked := s.d.model.Bond
	if picked == "" || picked == "bond47" || picked == "bond64" {
		t.Fatalf("Enter after the pages picked %q", picked)
	}

	// b reopens the list; / filters; Enter picks the match.
	s.press("b")
	mustContain(t, s.text(), "64 bonds: choose one")
	s.press("/47")
	screen = s.text()
	mustContain(t, screen, "filter: 47")
	mustNotContain(t, screen, " bond46 ")
	s.key(tcell.KeyEnter, 0)
	if s.d.model.Bond != "bond47" {
		t.Fatalf("the filter's match not picked: %q", s.d.model.Bond)
	}
	mustNotContain(t, s.text(), "bonds: choose one")
	mustContain(t, s.text(), "bond47 47/64")

	// Digits find a bond by its number when there are more than nine.
	s.press("b12")
	s.key(tcell.KeyEnter, 0)
	if s.d.model.Bond != "bond12" {
		t.Fatalf("b12 Enter picked %q", s.d.model.Bond)
	}
	// Esc clears the filter first, then closes.
	s.press("b/zz")
	mustContain(t, s.text(), "no bond matches")
	s.key(tcell.KeyEscape, 0)
	mustContain(t, s.text(), "64 bonds: choose one")
	s.key(tcell.KeyEscape, 0)
	mustNotContain(t, s.text(), "bonds: choose one")
}

func lineWith(t *testing.T, screen, needle string) string {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, needle) {
			return l
		}
	}
	t.Fatalf("no line with %q:\n%s", needle, screen)
	return ""
}

func TestNaturalCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"bond2", "bond10", -1}, {"bond10", "bond2", 1}, {"bond1", "bond1", 0},
		{"eth9", "eth10", -1}, {"bond", "bond0", -1}, {"b1s2", "b1s10", -1},
		{"bond01", "bond1", 1}, {"a", "b", -1}, {"bond-a", "bond0", -1},
	} {
		if got := natural.Compare(c.a, c.b); got != c.want {
			t.Errorf("natural.Compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
