package term

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"
)

// showCounter counts the frames that reach the terminal.
type showCounter struct {
	tcell.Screen
	shows int
}

func (c *showCounter) Show() { c.shows++; c.Screen.Show() }

// TestQuietScreenSkipsUnchangedFrames: a frame that changed no cell and
// not the cursor is not sent; a changed cell, style or cursor is, and
// what reaches the screen is right every time.
func TestQuietScreenSkipsUnchangedFrames(t *testing.T) {
	sim := tcell.NewSimulationScreen("")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	sim.SetSize(20, 3)
	counter := &showCounter{Screen: sim}
	q := NewScreen(counter, nil)
	red := tcell.StyleDefault.Foreground(tcell.ColorRed)
	frame := func(text string, style tcell.Style) {
		q.Clear()
		q.PutStrStyled(0, 1, text, style)
		q.Show()
	}
	cell := func(x int) (string, tcell.Style) {
		str, style, _ := sim.Get(x, 1)
		return str, style
	}
	steps := []struct {
		name       string
		do         func()
		wantShows  int
		wantText   string
		wantStyled tcell.Style
	}{
		{"first frame", func() { frame("bond0 up", red) }, 1, "b", red},
		{"same frame again", func() { frame("bond0 up", red) }, 1, "b", red},
		{"a digit changes", func() { frame("bond1 up", red) }, 2, "b", red},
		{"only the style changes", func() { frame("bond1 up", tcell.StyleDefault) }, 3, "b", tcell.StyleDefault},
		{"the cursor moves", func() { q.ShowCursor(3, 1); frame("bond1 up", tcell.StyleDefault) }, 4, "b", tcell.StyleDefault},
		{"the cursor stays", func() { q.ShowCursor(3, 1); frame("bond1 up", tcell.StyleDefault) }, 4, "b", tcell.StyleDefault},
		{"the cursor hides", func() { q.HideCursor(); frame("bond1 up", tcell.StyleDefault) }, 5, "b", tcell.StyleDefault},
		{"text shorter: the rest is blanked", func() { frame("b", tcell.StyleDefault) }, 6, "b", tcell.StyleDefault},
	}
	for _, st := range steps {
		st.do()
		if counter.shows != st.wantShows {
			t.Fatalf("%s: %d frames sent, want %d", st.name, counter.shows, st.wantShows)
		}
		if str, style := cell(0); str != st.wantText || style != st.wantStyled {
			t.Fatalf("%s: cell 0 holds %q %v, want %q %v", st.name, str, style, st.wantText, st.wantStyled)
		}
	}
	if str, _ := cell(4); str != " " {
		t.Fatalf("cell 4 holds %q after the shorter frame, want a blank", str)
	}
	if str, _ := cell(4); str == "1" {
		t.Fatal("the changed digit never reached the screen")
	}
}

// TestQuietScreenManyStyles: styles past the table's end are drawn
// right, only without the shortcut.
func TestQuietScreenManyStyles(t *testing.T) {
	sim := tcell.NewSimulationScreen("")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	sim.SetSize(4, 1)
	q := NewScreen(sim, nil)
	for i := range maxStyles + 10 {
		st := tcell.StyleDefault.Foreground(tcell.NewRGBColor(int32(i>>8), int32(i&0xff), 7))
		q.Clear()
		q.Put(0, 0, "x", st)
		q.Show()
		if _, got, _ := sim.Get(0, 0); got != st {
			t.Fatalf("style %d: the cell holds %v, want %v", i, got, st)
		}
	}
}

// dropClusterCases: line art alone, before ASCII, before more line art,
// before a combining mark, a variation selector, a joiner, an emoji; and
// other text the panels hold.
var dropClusterCases = []string{
	"│", "│ x", "──┐", "█▉▊", "⣿⣀⡀ 12", "─\u0301x", "▕\ufe0f", "─\u200d─", "█😀",
	"a", "é x", "e\u0301", "漢字", "😀", "\x01", "", "\xff│", "│\xff",
}

// TestDropClusterMatchesUniseg: what a write under an overlay skips is
// the first grapheme cluster and its width, as uniseg parses it.
func TestDropClusterMatchesUniseg(t *testing.T) {
	for _, s := range dropClusterCases {
		checkDropCluster(t, s)
	}
}

func FuzzDropCluster(f *testing.F) {
	for _, s := range dropClusterCases {
		f.Add(s)
	}
	f.Fuzz(checkDropCluster)
}

func checkDropCluster(t *testing.T, s string) {
	rest, width := dropCluster(s)
	_, wantRest, wantWidth, _ := uniseg.FirstGraphemeClusterInString(s, -1)
	if rest != wantRest || width != wantWidth {
		t.Errorf("dropCluster(%q) = %q, %d; uniseg: %q, %d", s, rest, width, wantRest, wantWidth)
	}
}

// TestPutASCIIUnderCover: a run of text across an overlay's edge leaves
// the cells under it to the overlay and writes the others, as writing it
// cell by cell does.
func TestPutASCIIUnderCover(t *testing.T) {
	screens := [2]tcell.SimulationScreen{tcell.NewSimulationScreen(""), tcell.NewSimulationScreen("")}
	var qs [2]*Screen
	for i, sim := range screens {
		if err := sim.Init(); err != nil {
			t.Fatal(err)
		}
		sim.SetSize(20, 3)
		qs[i] = NewScreen(sim, nil)
		qs[i].Clear()
		qs[i].Cover(5, 1, 6, 1) // columns 5-10 of row 1
	}
	for y := range 3 {
		text := "0123456789abcdefghij"
		qs[0].PutASCII(-2, y, text, tcell.StyleDefault)
		for k := range len(text) {
			qs[1].Put(-2+k, y, text[k:k+1], tcell.StyleDefault)
		}
	}
	for i := range qs {
		qs[i].Uncover()
		qs[i].Show()
	}
	for y := range 3 {
		var got, want strings.Builder
		for x := range 20 {
			a, _, _ := screens[0].Get(x, y)
			b, _, _ := screens[1].Get(x, y)
			got.WriteString(a)
			want.WriteString(b)
		}
		if got.String() != want.String() {
			t.Errorf("row %d: %q, cell by cell %q", y, got.String(), want.String())
		}
		if y == 1 && got.String() != "23456      defghij  " {
			t.Errorf("row 1: %q, want the covered columns 5-10 left blank", got.String())
		}
	}
}
