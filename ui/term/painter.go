package term

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/gdamore/tcell/v2/terminfo"
)

// painter sends the cells a frame changed to the terminal itself, in place
// of tcell's Show. Show compares every cell of the screen with what it
// last sent (7,680 records at 160x48, each with a style of two strings),
// and at 10 frames a second that comparison was the largest single cost of
// the dashboard; the Screen in front of tcell knows already which
// cells a frame changed, so the painter visits those alone.
//
// It speaks as tcell would for the same cells: the same terminfo, the same
// choice of colour sequences (true colour, the palette and its nearest
// match), attributes in tcell's order, tcell's own cell buffer as the
// source of what a cell holds, and the cells it sends marked clean there,
// under tcell's lock, so that tcell's own redraws (a resize, a Sync, a
// frame the painter declines) send exactly what is left. What it does not
// handle it declines, and that frame goes through tcell: a terminal that
// is not UTF-8 or has no colours, wide characters, URLs and fancy
// underlines, the bottom-right cell of a terminal that scrolls when it is
// written, and styles beyond the Screen's table.
type painter struct {
	ti        *terminfo.Terminfo
	out       io.Writer // the terminal
	cells     *tcell.CellBuffer
	lock      sync.Locker
	truecolor bool
	palette   []tcell.Color
	ansiGoto  bool // cup is the ANSI "ESC [ row ; col H": written without TParm
	guardLast bool // writing the bottom-right cell would scroll the screen
	syncStart string
	syncEnd   string

	styles []string // by the Screen's style id: the sequence setting it; "" unknown
	buf    bytes.Buffer
	frames int // sent by the painter, for the tests
}

// cellScreen is what the painter needs of tcell's terminal screen beyond
// tcell.Screen: its cell buffer and the lock that guards it (tcell's own
// screen has both; a simulation screen has no terminal to write to).
type cellScreen interface {
	tcell.Screen
	GetCells() *tcell.CellBuffer
	sync.Locker
}

// ansiCup is the terminfo cup of ANSI terminals (xterm, screen, tmux, the
// Linux console and most others).
const ansiCup = "\x1b[%i%p1%d;%p2%dH"

// newPainter arms a painter for screen, whose terminal ti describes, or
// says why not (nil). screen must be initialised: its colours and
// character set are known then. The frames go to out, a writer of the
// same terminal (OpenFrameWriter), or when it is nil to tcell's tty.
func newPainter(screen tcell.Screen, ti *terminfo.Terminfo, out io.Writer) *painter {
	cs, ok := screen.(cellScreen)
	if !ok || ti == nil {
		return nil
	}
	if out == nil {
		tty, ok := screen.Tty()
		if !ok || tty == nil {
			return nil
		}
		out = tty
	}
	switch strings.ToLower(screen.CharacterSet()) {
	case "utf-8", "utf8":
	default:
		return nil // tcell's encoder and fallbacks for box lines and blocks
	}
	colors := screen.Colors()
	if colors <= 0 || ti.SetCursor == "" || ti.AttrOff == "" {
		return nil // no colours: tcell's luminance and reverse video
	}
	p := &painter{
		ti:        ti,
		out:       out,
		cells:     cs.GetCells(),
		lock:      cs,
		truecolor: colors == 1<<24,
		ansiGoto:  ti.SetCursor == ansiCup,
		guardLast: ti.AutoMargin && ti.DisableAutoMargin == "" && ti.InsertChar != "",
	}
	for i := range min(ti.Colors, 256) {
		p.palette = append(p.palette, tcell.PaletteColor(i))
	}
	if ti.XTermLike { // as tcell: synchronized output, one frame at once
		p.syncStart, p.syncEnd = "\x1b[?2026h", "\x1b[?2026l"
	}
	return p
}

// paint sends the cells of pending (indexes y*width+x into a width x
// height screen, in any order, repeats allowed) that tcell holds as
// changed, then places or hides the cursor. It returns false, having sent
// nothing, when the frame needs tcell's Show.
func (p *painter) paint(q *Screen, pending []int32) bool {
	p.lock.Lock()
	defer p.lock.Unlock()
	w, h := p.cells.Size()
	if w != q.width || h != q.height {
		return false // tcell resized under the frame: its Show redraws all
	}
	slices.Sort(pending)
	p.buf.Reset()
	p.puts(p.syncStart)
	if p.ti.HideCursor != "" {
		p.puts(p.ti.HideCursor)
	}
	cx, cy, current := -1, -1, -1
	last := int32(-1)
	for _, i := range pending {
		if i == last || i < 0 || int(i) >= w*h {
			continue
		}
		last = i
		x, y := int(i)%w, int(i)/w
		if !p.cells.Dirty(x, y) {
			continue
		}
		str, style, width := p.cells.Get(x, y)
		if width > 1 || (x > 0 && p.wide(x-1, y)) || !utf8.ValidString(str) {
			return false // wide characters: tcell's own handling
		}
		if p.guardLast && x == w-1 && y == h-1 {
			return false
		}
		id := p.styleSeq(q, style)
		if id < 0 {
			return false
		}
		if x != cx || y != cy {
			p.moveTo(x, y)
		}
		if id != current {
			p.buf.WriteString(p.styles[id])
			current = id
		}
		p.buf.WriteString(str)
		cx, cy = x+1, y
	}
	if x, y := q.cursorX, q.cursorY; x >= 0 && y >= 0 && x < w && y < h {
		p.moveTo(x, y)
		p.puts(p.ti.ShowCursor)
	}
	p.puts(p.syncEnd)
	// Only now, with the whole frame in hand, are the cells clean.
	last = -1
	for _, i := range pending {
		if i != last && i >= 0 && int(i) < w*h {
			p.cells.SetDirty(int(i)%w, int(i)/w, false)
		}
		last = i
	}
	_, _ = p.buf.WriteTo(p.out)
	p.frames++
	return true
}

// wide tells whether the cell at (x, y) holds a character two cells wide.
func (p *painter) wide(x, y int) bool {
	_, _, width := p.cells.Get(x, y)
	return width > 1
}

func (p *painter) puts(s string) {
	if s != "" {
		p.ti.TPuts(&p.buf, s)
	}
}

// moveTo places the terminal's cursor at (x, y).
func (p *painter) moveTo(x, y int) {
	if !p.ansiGoto {
		p.puts(p.ti.TGoto(x, y))
		return
	}
	var b [24]byte
	s := append(b[:0], "\x1b["...)
	s = strconv.AppendInt(s, int64(y+1), 10)
	s = append(s, ';')
	s = strconv.AppendInt(s, int64(x+1), 10)
	s = append(s, 'H')
	p.buf.Write(s)
}

// styleSeq is the index of style's sequence in p.styles, made on first
// use; -1 for a style the painter does not send.
func (p *painter) styleSeq(q *Screen, style tcell.Style) int {
	id := int(q.styleID(style))
	if id >= noStyle {
		return -1
	}
	if id >= len(p.styles) {
		p.styles = append(p.styles, make([]string, id+1-len(p.styles))...)
	}
	if p.styles[id] == "" {
		seq, ok := p.sequence(style)
		if !ok {
			return -1
		}
		p.styles[id] = seq
	}
	return id
}

// sequence is what tcell sends to switch to style: attributes off, the
// colours, then bold, underline, reverse, blink, dim, italic and strike,
// in that order. ok is false for what the painter leaves to tcell: URLs,
// and underlines with a colour or a shape.
func (p *painter) sequence(style tcell.Style) (string, bool) {
	if style != style.Url("") {
		return "", false
	}
	if style.GetUnderlineColor() != tcell.ColorDefault {
		return "", false
	}
	switch style.GetUnderlineStyle() {
	case tcell.UnderlineStyleNone, tcell.UnderlineStyleSolid:
	default:
		return "", false
	}
	ti := p.ti
	var b bytes.Buffer
	put := func(s string) {
		if s != "" {
			ti.TPuts(&b, s)
		}
	}
	fg, bg, attrs := style.Decompose()
	put(ti.AttrOff)
	if fg == tcell.ColorReset || bg == tcell.ColorReset {
		put(ti.ResetFgBg)
	}
	colorsDone := false
	if p.truecolor {
		switch {
		case ti.SetFgBgRGB != "" && fg.IsRGB() && bg.IsRGB():
			r1, g1, b1 := fg.RGB()
			r2, g2, b2 := bg.RGB()
			put(ti.TParm(ti.SetFgBgRGB, int(r1), int(g1), int(b1), int(r2), int(g2), int(b2)))
			colorsDone = true
		default:
			if fg.IsRGB() && ti.SetFgRGB != "" {
				r, g, bl := fg.RGB()
				put(ti.TParm(ti.SetFgRGB, int(r), int(g), int(bl)))
				fg = tcell.ColorDefault
			}
			if bg.IsRGB() && ti.SetBgRGB != "" {
				r, g, bl := bg.RGB()
				put(ti.TParm(ti.SetBgRGB, int(r), int(g), int(bl)))
				bg = tcell.ColorDefault
			}
		}
	}
	if !colorsDone {
		fg, bg = p.inPalette(fg), p.inPalette(bg)
		if fg.Valid() && bg.Valid() && ti.SetFgBg != "" {
			put(ti.TParm(ti.SetFgBg, int(fg&0xff), int(bg&0xff)))
		} else {
			if fg.Valid() && ti.SetFg != "" {
				put(ti.TParm(ti.SetFg, int(fg&0xff)))
			}
			if bg.Valid() && ti.SetBg != "" {
				put(ti.TParm(ti.SetBg, int(bg&0xff)))
			}
		}
	}
	if attrs&tcell.AttrBold != 0 {
		put(ti.Bold)
	}
	if style.GetUnderlineStyle() != tcell.UnderlineStyleNone {
		put(ti.Underline)
	}
	for _, a := range []struct {
		attr tcell.AttrMask
		seq  string
	}{
		{tcell.AttrReverse, ti.Reverse},
		{tcell.AttrBlink, ti.Blink},
		{tcell.AttrDim, ti.Dim},
		{tcell.AttrItalic, ti.Italic},
		{tcell.AttrStrikeThrough, ti.StrikeThrough},
	} {
		if attrs&a.attr != 0 {
			put(a.seq)
		}
	}
	return b.String(), true
}

// inPalette is the terminal's colour for c: a palette colour the terminal
// has stays, any other the palette's nearest (tcell's FindColor).
func (p *painter) inPalette(c tcell.Color) tcell.Color {
	if !c.Valid() {
		return c
	}
	if !c.IsRGB() && int(c&0xff) < len(p.palette) && c == tcell.PaletteColor(int(c&0xff)) {
		return c
	}
	return tcell.FindColor(c, p.palette)
}

// OpenTerminal makes the screen of the user's terminal as tcell.NewScreen
// does, keeping for the painter the terminfo of $TERM that it is made
// with (nil when tcell finds none, and then tcell.NewScreen's own screen,
// or its error).
func OpenTerminal() (tcell.Screen, *terminfo.Terminfo, error) {
	ti, err := tcell.LookupTerminfo(os.Getenv("TERM"))
	if err != nil {
		screen, err := tcell.NewScreen()
		return screen, nil, err
	}
	screen, err := tcell.NewTerminfoScreenFromTtyTerminfo(nil, ti)
	return screen, ti, err
}
