package ui

import (
	"github.com/gdamore/tcell/v2"
)

// quietScreen is the terminal as tview sees it, with one difference: the
// clear that tview does before every draw is skipped. tcell marks a cell
// for output whenever a write changes it within the frame, so clearing to
// spaces and drawing the same text again sent the whole screen to the
// terminal on every snapshot (16 kB a frame at 160x48). Instead each cell
// is written once with its final content, and only cells that really
// changed go out. To keep what no panel drew from going stale, the cells
// not written during a frame are blanked just before Show.
//
// It also remembers what it last put in each cell, so a write of the same
// text and style (most of a screen, most of the time) does not go through
// tcell's locking and grapheme parsing again: the cell already holds it,
// as nothing clears it any more.
type quietScreen struct {
	tcell.Screen
	width, height int
	written       []bool // this frame, by y*width+x
	shown         []shownCell
}

// shownCell is what quietScreen last put in a cell.
type shownCell struct {
	str   string
	style tcell.Style
	width int
}

func newQuietScreen(s tcell.Screen) *quietScreen { return &quietScreen{Screen: s} }

// Clear starts a frame (tview calls it first thing in every draw): forget
// what was written, keep what is shown.
func (s *quietScreen) Clear() {
	w, h := s.Screen.Size()
	if w != s.width || h != s.height {
		// tcell resized its buffer, and blanked it: forget what was shown.
		s.width, s.height = w, h
		s.written = make([]bool, w*h)
		s.shown = make([]shownCell, w*h)
	}
	clear(s.written)
}

func (s *quietScreen) mark(x, y, width int) {
	if y < 0 || y >= s.height {
		return
	}
	for i := max(x, 0); i < x+width && i < s.width; i++ {
		s.written[y*s.width+i] = true
	}
}

// Put implements tcell.Screen, noting the cells written.
func (s *quietScreen) Put(x, y int, str string, style tcell.Style) (string, int) {
	if x >= 0 && y >= 0 && x < s.width && y < s.height {
		i := y*s.width + x
		if c := &s.shown[i]; c.str == str && c.style == style && c.width > 0 {
			s.mark(x, y, c.width)
			return "", c.width // the cell holds this already
		}
		rest, width := s.Screen.Put(x, y, str, style)
		s.shown[i] = shownCell{str: str[:len(str)-len(rest)], style: style, width: width}
		if rest != "" {
			s.shown[i].width = 0 // the cluster is not all of str: no shortcut
		}
		s.mark(x, y, max(width, 1))
		return rest, width
	}
	return s.Screen.Put(x, y, str, style)
}

// SetContent implements tcell.Screen (tview's own widgets draw with it).
func (s *quietScreen) SetContent(x, y int, primary rune, combining []rune, style tcell.Style) {
	s.Put(x, y, string(append([]rune{primary}, combining...)), style)
}

// SetCell implements tcell.Screen.
func (s *quietScreen) SetCell(x, y int, style tcell.Style, ch ...rune) {
	if len(ch) == 0 {
		ch = []rune{' '}
	}
	s.Put(x, y, string(ch), style)
}

// PutStrStyled implements tcell.Screen through Put, so every cell is noted.
func (s *quietScreen) PutStrStyled(x, y int, str string, style tcell.Style) {
	for str != "" {
		var width int
		str, width = s.Put(x, y, str, style)
		if width == 0 {
			break
		}
		x += width
	}
}

// PutStr implements tcell.Screen.
func (s *quietScreen) PutStr(x, y int, str string) { s.PutStrStyled(x, y, str, tcell.StyleDefault) }

// Fill implements tcell.Screen: every cell is written.
func (s *quietScreen) Fill(r rune, style tcell.Style) {
	for i := range s.written {
		s.Put(i%s.width, i/s.width, string(r), style)
	}
}

// blankUnwritten writes a space over each cell no panel drew this frame.
// A cell that was blank already stays clean (tcell compares the text).
func (s *quietScreen) blankUnwritten() {
	if w, h := s.Screen.Size(); w != s.width || h != s.height {
		// Resized mid-frame: tview draws again at once; blank it all.
		s.Clear()
	}
	for i, done := range s.written {
		if !done {
			s.Put(i%s.width, i/s.width, " ", tcell.StyleDefault)
		}
	}
}

// Show implements tcell.Screen: blank what was not drawn, then send the
// changed cells.
func (s *quietScreen) Show() {
	s.blankUnwritten()
	s.Screen.Show()
}

// Sync implements tcell.Screen.
func (s *quietScreen) Sync() {
	s.blankUnwritten()
	s.Screen.Sync()
}
