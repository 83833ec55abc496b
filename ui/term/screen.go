package term

import (
	"image"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/gdamore/tcell/v2/terminfo"
	"github.com/rivo/uniseg"
)

// Screen is the terminal as tview sees it, with one difference: the
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
// as nothing clears it any more. And when a frame changed no cell (and
// not the cursor), Show leaves tcell alone: tcell would compare every
// cell of the screen and ask the terminal its size only to send nothing.
type Screen struct {
	tcell.Screen
	width, height int
	written       []bool // this frame, by y*width+x
	shown         []shownCell
	changed       bool // a cell or the cursor changed since the last Show

	// styles numbers the styles seen, so a shown cell records two bytes
	// instead of a 72-byte tcell.Style: the record of a 160x48 screen is
	// then 184 kB rather than 737 kB, read through on every frame. Runs
	// of text share a style, so the last one answers most lookups.
	styles    []tcell.Style
	lastStyle tcell.Style
	lastID    uint16

	cursorX, cursorY int // -1: hidden

	// covered is a rectangle an overlay paints over this frame: writes
	// under it are dropped, as the overlay's own will replace them.
	covered image.Rectangle
	// paint is a rectangle whose cells nothing writes this frame are
	// blanked in paintStyle rather than the default (an overlay's
	// background): filling it first would write its cells twice.
	paint      image.Rectangle
	paintStyle tcell.Style

	// painter sends the changed cells in place of tcell's Show, once the
	// screen has shown a first frame (and when the terminal suits it);
	// pending are the cells changed since the last Show, for it.
	terminfo   *terminfo.Terminfo
	Frames     io.WriteCloser // the painter's way to the terminal (OpenFrameWriter); nil: tcell's tty
	painter    *painter
	painterSet bool
	pending    []int32
}

// BlankIn has the cells of (x, y, w, h) that nothing writes this frame
// blanked in style: an overlay's clear, without writing each cell twice.
func (s *Screen) BlankIn(x, y, w, h int, style tcell.Style) {
	s.paint = image.Rect(x, y, x+max(w, 0), y+max(h, 0))
	s.paintStyle = style
}

// cover drops the writes inside (x, y, w, h) until uncover.
func (s *Screen) Cover(x, y, w, h int) {
	s.covered = image.Rect(x, y, x+max(w, 0), y+max(h, 0))
}

// uncover lets every write through again.
func (s *Screen) Uncover() { s.covered = image.Rectangle{} }

// shownCell is what Screen last put in a cell.
type shownCell struct {
	str   string
	style uint16 // index in styles
	width uint8
	// whole: str was all of what Put got, so a Put of the same str and
	// style may be answered from here.
	whole bool
}

// maxStyles bounds the style table; a style beyond it is never
// shortcut (the dashboard uses a few dozen).
const maxStyles = 1 << 12

// noStyle is the id of a style not in the table.
const noStyle = maxStyles

// NewScreen puts a Screen in front of s; ti describes s's
// terminal when s is a terminfo screen made with it (nil: no painter).
func NewScreen(s tcell.Screen, ti *terminfo.Terminfo) *Screen {
	return &Screen{Screen: s, terminfo: ti, cursorX: -1, cursorY: -1, styles: []tcell.Style{tcell.StyleDefault}}
}

// styleID numbers style (noStyle when the table is full).
func (s *Screen) styleID(style tcell.Style) uint16 {
	if style == s.lastStyle {
		return s.lastID
	}
	id := uint16(noStyle)
	if i := slices.Index(s.styles, style); i >= 0 {
		id = uint16(i)
	} else if len(s.styles) < maxStyles {
		id = uint16(len(s.styles))
		s.styles = append(s.styles, style)
	}
	s.lastStyle, s.lastID = style, id
	return id
}

// Clear starts a frame (tview calls it first thing in every draw): forget
// what was written, keep what is shown.
func (s *Screen) Clear() {
	w, h := s.Screen.Size()
	if w != s.width || h != s.height {
		// tcell resized its buffer, and blanked it: forget what was shown.
		s.width, s.height = w, h
		s.written = make([]bool, w*h)
		s.shown = make([]shownCell, w*h)
		s.changed = true
	}
	clear(s.written)
	s.paint = image.Rectangle{}
}

func (s *Screen) mark(x, y, width int) {
	if y < 0 || y >= s.height {
		return
	}
	for i := max(x, 0); i < x+width && i < s.width; i++ {
		s.written[y*s.width+i] = true
	}
}

// Put implements tcell.Screen, noting the cells written.
func (s *Screen) Put(x, y int, str string, style tcell.Style) (string, int) {
	if !s.covered.Empty() && image.Pt(x, y).In(s.covered) {
		return dropCluster(str)
	}
	if x >= 0 && y >= 0 && x < s.width && y < s.height {
		i := y*s.width + x
		id := s.styleID(style)
		if c := &s.shown[i]; c.whole && c.width > 0 && c.style == id && id != noStyle && c.str == str {
			s.mark(x, y, int(c.width))
			return "", int(c.width) // the cell holds this already
		}
		rest, width := s.Screen.Put(x, y, str, style)
		c := shownCell{str: str[:len(str)-len(rest)], style: id, width: uint8(min(width, 255)), whole: rest == ""}
		if old := s.shown[i]; old.str != c.str || old.style != c.style || old.width != c.width || id == noStyle {
			s.changed = true
			if s.painter != nil {
				// The cell, and those a wide character covers now or did.
				for k := range max(width, int(old.width), 1) {
					if x+k < s.width {
						s.pending = append(s.pending, int32(i+k))
					}
				}
			}
		}
		s.shown[i] = c
		s.mark(x, y, max(width, 1))
		return rest, width
	}
	return s.Screen.Put(x, y, str, style) // off the screen: tcell keeps nothing
}

// PutASCII writes text, printable ASCII each of whose bytes is a cell of
// its own (ASCIICell), from (x, y) in one style: the panels' text, most of
// a screen. A cell that holds its byte already is only marked written,
// with the style looked up once for the run instead of once per cell.
func (s *Screen) PutASCII(x, y int, text string, style tcell.Style) {
	if y < 0 || y >= s.height {
		for k := range len(text) {
			s.Put(x+k, y, text[k:k+1], style)
		}
		return
	}
	// The columns of this row under an overlay: a byte there is a cell
	// the overlay writes over, dropped as Put would drop it.
	coverFrom, coverTo := 0, 0
	if !s.covered.Empty() && y >= s.covered.Min.Y && y < s.covered.Max.Y {
		coverFrom, coverTo = s.covered.Min.X, s.covered.Max.X
	}
	id := s.styleID(style)
	row := y * s.width
	for k := range len(text) {
		cx := x + k
		if cx >= coverFrom && cx < coverTo {
			continue
		}
		if cx < 0 || cx >= s.width {
			s.Put(cx, y, text[k:k+1], style)
			continue
		}
		c := &s.shown[row+cx]
		if id != noStyle && c.style == id && c.whole && c.width == 1 && len(c.str) == 1 && c.str[0] == text[k] {
			s.written[row+cx] = true
			continue
		}
		s.Put(cx, y, text[k:k+1], style)
	}
}

// SetContent implements tcell.Screen (tview's own widgets draw with it).
func (s *Screen) SetContent(x, y int, primary rune, combining []rune, style tcell.Style) {
	s.Put(x, y, string(append([]rune{primary}, combining...)), style)
}

// SetCell implements tcell.Screen.
func (s *Screen) SetCell(x, y int, style tcell.Style, ch ...rune) {
	if len(ch) == 0 {
		ch = []rune{' '}
	}
	s.Put(x, y, string(ch), style)
}

// PutStrStyled implements tcell.Screen through Put, so every cell is noted.
func (s *Screen) PutStrStyled(x, y int, str string, style tcell.Style) {
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
func (s *Screen) PutStr(x, y int, str string) { s.PutStrStyled(x, y, str, tcell.StyleDefault) }

// Fill implements tcell.Screen: every cell is written.
func (s *Screen) Fill(r rune, style tcell.Style) {
	for i := range s.written {
		s.Put(i%s.width, i/s.width, string(r), style)
	}
}

// blankUnwritten writes a space over each cell no panel drew this frame.
// A cell that was blank already stays clean (tcell compares the text).
func (s *Screen) blankUnwritten() {
	if w, h := s.Screen.Size(); w != s.width || h != s.height {
		// Resized mid-frame: tview draws again at once; blank it all.
		s.Clear()
	}
	for i, done := range s.written {
		if done {
			continue
		}
		x, y := i%s.width, i/s.width
		if !s.paint.Empty() && image.Pt(x, y).In(s.paint) {
			s.Put(x, y, " ", s.paintStyle)
			continue
		}
		if c := &s.shown[i]; c.whole && c.style == 0 && c.str == " " {
			continue // blank already (style 0 is tcell.StyleDefault)
		}
		s.Put(x, y, " ", tcell.StyleDefault)
	}
}

// Show implements tcell.Screen: blank what was not drawn, then send the
// changed cells, if any.
func (s *Screen) Show() {
	s.blankUnwritten()
	if !s.changed {
		return
	}
	s.changed = false
	if s.painter != nil && s.painter.paint(s, s.pending) {
		s.pending = s.pending[:0]
		return
	}
	s.pending = s.pending[:0]
	s.Screen.Show()
	if !s.painterSet {
		// The screen is initialised and has sent a frame: tcell knows the
		// terminal's colours and character set, and its buffer is clean.
		s.painterSet = true
		s.painter = newPainter(s.Screen, s.terminfo, s.Frames)
	}
}

// Fini implements tcell.Screen: the terminal is given back, and the
// painter's way to it closed.
func (s *Screen) Fini() {
	s.Screen.Fini()
	if s.Frames != nil {
		s.Frames.Close()
		s.Frames = nil
	}
}

// Sync implements tcell.Screen.
func (s *Screen) Sync() {
	s.blankUnwritten()
	s.changed = false
	s.pending = s.pending[:0]
	s.Screen.Sync()
}

// ShowCursor implements tcell.Screen; tcell moves the cursor in Show, so
// a moved cursor is a change.
func (s *Screen) ShowCursor(x, y int) {
	if x != s.cursorX || y != s.cursorY {
		s.cursorX, s.cursorY, s.changed = x, y, true
	}
	s.Screen.ShowCursor(x, y)
}

// HideCursor implements tcell.Screen.
func (s *Screen) HideCursor() {
	if s.cursorX != -1 || s.cursorY != -1 {
		s.cursorX, s.cursorY, s.changed = -1, -1, true
	}
	s.Screen.HideCursor()
}

// lineArtRune reports whether r is one of the box-drawing, block or
// braille characters the panels draw borders, bars and graphs with: one
// column wide, never joined to the character before or after.
func lineArtRune(r rune) bool {
	return r >= 0x2500 && r <= 0x259f || r >= 0x2800 && r <= 0x28ff
}

// dropCluster is what Put returns for str without drawing it: the rest
// after its first grapheme cluster, and the cluster's width.
func dropCluster(str string) (string, int) {
	if str == "" {
		return "", 0
	}
	if ASCIICell(str) {
		return str[1:], 1
	}
	if r, n := utf8.DecodeRuneInString(str); lineArtRune(r) {
		// A border, bar or graph character, a cell of its own unless a
		// mark joins it (the next character is not ASCII or line art).
		if next, _ := utf8.DecodeRuneInString(str[n:]); n == len(str) || next < utf8.RuneSelf || lineArtRune(next) {
			return str[n:], 1
		}
	}
	_, rest, width, _ := uniseg.FirstGraphemeClusterInString(str, -1)
	return rest, width
}

// ASCIICell reports whether s starts with printable ASCII not followed by
// a combining mark: its own grapheme cluster, one column wide. Most of the
// screen is, and telling so is much cheaper than uniseg.
func ASCIICell(s string) bool {
	return s != "" && s[0] >= 0x20 && s[0] < 0x7f && (len(s) == 1 || s[1] < 0x80)
}
