package ui

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// mouse sends a mouse action at a screen position through the root, as
// tview's event loop does, then redraws.
func (s *sim) mouse(action tview.MouseAction, x, y int) {
	ev := tcell.NewEventMouse(x, y, tcell.ButtonNone, tcell.ModNone)
	s.d.root.MouseHandler()(action, ev, func(p tview.Primitive) { s.d.app.SetFocus(p) })
	s.draw()
}

// at is where the screen shows needle (the first time), in cells.
func (s *sim) at(needle string) (x, y int) {
	s.t.Helper()
	for y, line := range strings.Split(s.text(), "\n") {
		if i := strings.Index(line, needle); i >= 0 {
			return len([]rune(line[:i])), y
		}
	}
	s.t.Fatalf("screen lacks %q:\n%s", needle, s.text())
	return 0, 0
}

func TestMouseSelectsAndScrolls(t *testing.T) {
	h := lacpHost(t, "synthetic-8023ad-6.8-4slaves-root.txt", []string{"e1", "e2", "e3", "e4"})
	s := newSim(t, h, 100, 30, false)
	_, ty, _, th := s.d.table.GetRect()
	x, y := -1, -1
	for i, line := range strings.Split(s.text(), "\n")[ty : ty+th] {
		if j := strings.Index(line, "e3"); j >= 0 {
			x, y = len([]rune(line[:j])), ty+i
			break
		}
	}
	if y < 0 {
		t.Fatalf("no row of e3 in the table:\n%s", s.text())
	}
	s.mouse(tview.MouseLeftClick, x, y)
	if got := s.d.table.selected; got != "e3" {
		t.Fatalf("click on e3's row selected %q", got)
	}
	s.mouse(tview.MouseScrollDown, x, y)
	if got := s.d.table.selected; got != "e4" {
		t.Fatalf("a wheel notch down from e3 selected %q", got)
	}
	// A click on the events panel focuses it.
	ex, ey := s.at("┌ events")
	s.mouse(tview.MouseLeftClick, ex+3, ey+2)
	if !s.d.events.HasFocus() {
		t.Fatal("a click on the events panel did not focus it")
	}
}

func TestMousePicksFromBondList(t *testing.T) {
	s := manyBonds(t)
	x, y := s.at(" bond5 ")
	s.mouse(tview.MouseLeftClick, x+2, y)
	if s.d.model.Bond != "bond5" {
		t.Fatalf("a click on bond5's row picked %q", s.d.model.Bond)
	}
	s.press("b")
	for range 3 {
		s.mouse(tview.MouseScrollDown, x+2, y)
	}
	s.key(tcell.KeyEnter, 0)
	if s.d.model.Bond != "bond8" {
		t.Fatalf("three wheel notches down from bond5, then Enter, picked %q", s.d.model.Bond)
	}
}
