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
