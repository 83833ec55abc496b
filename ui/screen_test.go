package ui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rivo/uniseg"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/")

// sim is a dashboard drawing on a simulated terminal, driven without the
// tview event loop: the test is the loop (apply, key, draw).
type sim struct {
	t      *testing.T
	d      *dashboard
	screen tcell.SimulationScreen
}

// newSim shows the host's snapshots, in order, on a width x height screen.
func newSim(t *testing.T, h *host, width, height int, mono bool) *sim {
	t.Helper()
	screen := tcell.NewSimulationScreen("UTF-8")
	d := newDashboard(Options{Feed: h.sampler, First: h.snaps[0], Screen: screen, NoColor: mono})
	screen.SetSize(width, height)
	d.apply(h.snaps[1:])
	s := &sim{t: t, d: d, screen: screen}
	s.draw()
	return s
}

// draw does what tview's draw does: clear, draw the root, show.
func (s *sim) draw() {
	w, h := s.screen.Size()
	s.d.root.SetRect(0, 0, w, h)
	s.d.screen.Clear()
	s.d.root.Draw(s.d.screen)
	s.d.screen.Show()
}

// key sends a key through the dashboard's key map and the focused panel,
// as the event loop would, then redraws.
func (s *sim) key(k tcell.Key, r rune) {
	ev := tcell.NewEventKey(k, r, tcell.ModNone)
	if out := s.d.handleKey(ev); out != nil {
		if h := s.d.root.InputHandler(); h != nil {
			h(out, func(p tview.Primitive) { s.d.app.SetFocus(p) })
		}
	}
	s.draw()
}

func (s *sim) press(keys string) {
	for _, r := range keys {
		s.key(tcell.KeyRune, r)
	}
}

// text is the screen as lines of text, trailing spaces cut.
func (s *sim) text() string {
	cells, w, h := s.screen.GetContents()
	var b strings.Builder
	for y := range h {
		var row strings.Builder
		for x := range w {
			c := cells[y*w+x]
			if len(c.Runes) == 0 {
				row.WriteByte(' ')
				continue
			}
			row.WriteString(string(c.Runes))
		}
		b.WriteString(strings.TrimRight(row.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// styleAt is the style of the first cell on the screen showing needle.
func (s *sim) styleAt(needle string) (tcell.Style, bool) { return s.styleAtOffset(needle, 0) }

// styleAtOffset is the style of the cell offset columns into the first
// place the screen shows needle.
func (s *sim) styleAtOffset(needle string, offset int) (tcell.Style, bool) {
	cells, w, _ := s.screen.GetContents()
	for y, line := range strings.Split(s.text(), "\n") {
		if i := strings.Index(line, needle); i >= 0 {
			x := len([]rune(line[:i])) + offset
			return cells[y*w+x].Style, true
		}
	}
	return tcell.StyleDefault, false
}

// golden compares the screen with testdata/screens/name.txt, or writes it
// under -update.
func (s *sim) golden(name string) {
	s.t.Helper()
	got := s.text()
	path := filepath.Join("testdata", "screens", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			s.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatalf("%v (run go test ./ui -update to create it)", err)
	}
	if got != string(want) {
		s.t.Errorf("screen %s differs from %s (go test ./ui -update rewrites it)\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

// TestTextWidthMatchesUniseg: the ASCII shortcut gives uniseg's answer.
func TestTextWidthMatchesUniseg(t *testing.T) {
	for _, s := range []string{"", "bond0", "ens1f0 up 9.41G", "tab\there", "ctl\x01x", "déjà", "漢字", "e\u0301", "\x7f", "—"} {
		if got, want := textWidth(s), uniseg.StringWidth(s); got != want {
			t.Errorf("textWidth(%q) = %d, uniseg says %d", s, got, want)
		}
	}
}

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
	q := newQuietScreen(counter, nil)
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
	q := newQuietScreen(sim, nil)
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
	var qs [2]*quietScreen
	for i, sim := range screens {
		if err := sim.Init(); err != nil {
			t.Fatal(err)
		}
		sim.SetSize(20, 3)
		qs[i] = newQuietScreen(sim, nil)
		qs[i].Clear()
		qs[i].cover(5, 1, 6, 1) // columns 5-10 of row 1
	}
	for y := range 3 {
		text := "0123456789abcdefghij"
		qs[0].putASCII(-2, y, text, tcell.StyleDefault)
		for k := range len(text) {
			qs[1].Put(-2+k, y, text[k:k+1], tcell.StyleDefault)
		}
	}
	for i := range qs {
		qs[i].uncover()
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
