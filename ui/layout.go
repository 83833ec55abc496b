package ui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// rect is a screen area; a zero rect hides a panel.
type rect struct{ x, y, w, h int }

func (r rect) visible() bool { return r.w > 0 && r.h > 0 }

// panes is where each panel goes for one terminal size.
type panes struct {
	header, table, rx, tx, side, events, footer rect
}

// Below these sizes panels give way, in this order: the graphs (they need
// width for a time axis and height for a shape), then the LACP panel; the
// header shrinks to one line. The slaves table and the events log stay.
const (
	minChartWidth  = 60
	minChartRows   = 6 // border, 3 plot rows, time axis, border
	minBottomRows  = 4 // border and two lines
	twoLineHeader  = 16
	sideBySideSide = 60
)

// computeLayout places the panels on a width x height screen for a bond
// with n slaves. It never returns a negative size, so any terminal draws.
func computeLayout(width, height, slaves int) panes {
	var p panes
	if width <= 0 || height <= 0 {
		return p
	}
	y := 0
	take := func(rows int) rect {
		rows = min(rows, height-y)
		r := rect{0, y, width, rows}
		y += rows
		return r
	}
	headerRows := 1
	if height >= twoLineHeader {
		headerRows = 2
	}
	footerRows := 0
	if height >= 3 {
		footerRows = 1
	}
	p.header = take(headerRows)
	rest := height - y - footerRows
	tableRows := min(max(slaves, 1)+3, rest) // rows + column header + border
	p.table = take(tableRows)
	rest = height - y - footerRows

	if width >= minChartWidth && rest >= minChartRows+minBottomRows {
		chartRows := max(minChartRows, rest*60/100)
		charts := take(chartRows)
		half := width / 2
		p.rx = rect{0, charts.y, half, charts.h}
		p.tx = rect{half, charts.y, width - half, charts.h}
		rest = height - y - footerRows
	}
	if rest >= 3 {
		bottom := take(rest)
		if width >= sideBySideSide {
			sideWidth := width * 45 / 100
			p.side = rect{0, bottom.y, sideWidth, bottom.h}
			p.events = rect{sideWidth, bottom.y, width - sideWidth, bottom.h}
		} else {
			p.events = bottom
		}
	}
	if footerRows > 0 {
		p.footer = rect{0, height - 1, width, 1}
	}
	return p
}

// screenLayout is the dashboard's root primitive: it places the panels
// for the current size at every draw (so a resize needs nothing else),
// draws an overlay on top when one is open, and passes keys to whichever
// panel has focus.
type screenLayout struct {
	*tview.Box
	d *dashboard
}

func (l *screenLayout) children() []tview.Primitive {
	d := l.d
	return []tview.Primitive{d.header, d.table, d.rx, d.tx, d.side, d.events, d.footer, d.overlay}
}

// Draw implements tview.Primitive.
func (l *screenLayout) Draw(screen tcell.Screen) {
	d := l.d
	x, y, w, h := l.GetRect()
	slaves := 1
	if b := d.model.Selected(); b != nil {
		slaves = len(b.Slaves)
	}
	p := computeLayout(w, h, slaves)
	d.prepareCharts()
	place := func(prim tview.Primitive, r rect) {
		if !r.visible() {
			prim.SetRect(0, 0, 0, 0)
			return
		}
		prim.SetRect(x+r.x, y+r.y, r.w, r.h)
		prim.Draw(screen)
	}
	d.visible = p // before the overlay: a docked one goes where the panels are
	if d.overlayName != "" {
		// The overlay is placed first, and what the panels would draw
		// under it is dropped: a cell written twice in a frame goes to
		// the terminal again, so every cell under an open overlay was
		// sent on every frame (three times the CPU with the flows open).
		d.placeOverlay(x, y, w, h)
		if d.screen != nil {
			d.screen.Cover(d.overlay.GetRect())
			defer d.screen.Uncover()
		}
	}
	place(d.header, p.header)
	place(d.table, p.table)
	place(d.rx, p.rx)
	place(d.tx, p.tx)
	place(d.side, p.side)
	place(d.events, p.events)
	place(d.footer, p.footer)
	if d.overlayName != "" {
		if d.screen != nil {
			d.screen.Uncover()
		}
		d.overlay.Draw(screen)
	}
}

// Focus gives focus to the table: the panel most keys are about.
func (l *screenLayout) Focus(delegate func(p tview.Primitive)) {
	delegate(l.d.table)
}

// HasFocus implements tview.Primitive.
func (l *screenLayout) HasFocus() bool {
	for _, c := range l.children() {
		if c.HasFocus() {
			return true
		}
	}
	return l.Box.HasFocus()
}

// InputHandler passes keys to the focused panel.
func (l *screenLayout) InputHandler() func(event *tcell.EventKey, setFocus func(p tview.Primitive)) {
	return l.WrapInputHandler(func(event *tcell.EventKey, setFocus func(p tview.Primitive)) {
		for _, c := range l.children() {
			if c.HasFocus() {
				if h := c.InputHandler(); h != nil {
					h(event, setFocus)
				}
				return
			}
		}
	})
}
