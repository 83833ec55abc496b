package ui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// linesView draws the lines its render function returns for the current
// size. Rendering at draw time from the Model keeps views free of state to
// keep in sync: a resize or a new snapshot is just another draw. A
// scrollable view scrolls with the arrows, PgUp/PgDn, Home/End while it has
// focus.
type linesView struct {
	*tview.Box
	th         *theme
	render     func(width, height int) []line
	scrollable bool
	bordered   bool
	// clear paints the area first: only overlays need it, the event loop
	// clears the screen before each draw.
	clear bool
	// title, when set, names the panel at each draw (the side panel is
	// "LACP" for 802.3ad and "failover" otherwise).
	title  func() string
	offset int
	// shown is how many lines the last draw had, to bound scrolling.
	shown, total int
}

func newLinesView(th *theme, title string, render func(width, height int) []line) *linesView {
	v := &linesView{Box: tview.NewBox(), th: th, render: render}
	v.SetBackgroundColor(tcell.ColorDefault)
	if title != "" {
		v.bordered = true
		v.SetBorder(true).SetTitle(" " + title + " ").SetTitleAlign(tview.AlignLeft)
		v.SetBorderColor(th.border).SetTitleColor(tcell.ColorDefault)
	}
	return v
}

// Draw implements tview.Primitive.
func (v *linesView) Draw(screen tcell.Screen) {
	if v.title != nil {
		v.SetTitle(" " + v.title() + " ")
	}
	if v.bordered {
		drawFrame(screen, v.Box, v.GetTitle(), 0, v.HasFocus(), v.clear, v.th)
	} else if v.clear {
		drawFrame(screen, v.Box, "", 0, false, true, v.th)
	}
	x, y, w, h := v.GetInnerRect()
	if w <= 0 || h <= 0 {
		return
	}
	lines := v.render(w, h)
	v.total, v.shown = len(lines), h
	v.offset = min(v.offset, max(len(lines)-h, 0))
	for i := 0; i < h && v.offset+i < len(lines); i++ {
		drawLine(screen, x, y+i, w, lines[v.offset+i])
	}
	if v.offset > 0 {
		drawText(screen, x+w-1, y, 1, "↑", v.th.dim)
	}
	if v.offset+h < len(lines) {
		drawText(screen, x+w-1, y+h-1, 1, "↓", v.th.dim)
	}
}

// InputHandler scrolls a scrollable view.
func (v *linesView) InputHandler() func(event *tcell.EventKey, setFocus func(p tview.Primitive)) {
	return v.WrapInputHandler(func(event *tcell.EventKey, _ func(p tview.Primitive)) {
		if !v.scrollable {
			return
		}
		v.offset = scroll(v.offset, event, v.shown, max(v.total-v.shown, 0))
	})
}

// scroll moves a position for the usual navigation keys, within [0, last].
func scroll(pos int, event *tcell.EventKey, page, last int) int {
	switch event.Key() {
	case tcell.KeyUp:
		pos--
	case tcell.KeyDown:
		pos++
	case tcell.KeyPgUp:
		pos -= max(page-1, 1)
	case tcell.KeyPgDn:
		pos += max(page-1, 1)
	case tcell.KeyHome:
		pos = 0
	case tcell.KeyEnd:
		pos = last
	case tcell.KeyRune:
		switch event.Rune() {
		case 'k':
			pos--
		case 'j':
			pos++
		}
	}
	return min(max(pos, 0), max(last, 0))
}
