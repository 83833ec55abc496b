package ui

import (
	"github.com/bondtop/bondtop/ui/term"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// drawFrame draws a panel's border and title in the theme's colours, the
// double line while the panel has focus (tview's convention). The panels
// embed tview.Box for its rectangle and focus, but draw their frame here:
// Box also paints every cell of its area with spaces first, work the
// event loop's screen clear has already done, and at 160x48 that was the
// larger half of a redraw. clear is for overlays, drawn over other panels.
// legend is the number of columns at the right end of the top border that
// the caller draws over (a chart's legend): like the title's, they get no
// border, because tcell sends a cell written twice in a frame to the
// terminal again even when it ends the frame as it was (the titles and
// legends were most of a frame's output at 160x48).
func drawFrame(screen tcell.Screen, box *tview.Box, title string, legend int, focused, clear bool, th *theme) {
	x, y, w, h := box.GetRect()
	if w <= 0 || h <= 0 {
		return
	}
	if clear {
		if q, ok := screen.(*term.Screen); ok {
			q.BlankIn(x, y, w, h, *th.base) // what stays unwritten, once
		} else {
			for row := y; row < y+h; row++ {
				fill(screen, x, row, w, th.base)
			}
		}
	}
	if w < 2 || h < 2 {
		return
	}
	b := tview.Borders
	hz, vt, tl, tr, bl, br := b.Horizontal, b.Vertical, b.TopLeft, b.TopRight, b.BottomLeft, b.BottomRight
	color := th.border
	if focused {
		hz, vt, tl, tr, bl, br = b.HorizontalFocus, b.VerticalFocus, b.TopLeftFocus, b.TopRightFocus, b.BottomLeftFocus, b.BottomRightFocus
		color = th.borderFocus
	}
	style := tcell.StyleDefault.Foreground(color)
	put := func(cx, cy int, r rune) { screen.Put(cx, cy, string(r), style) }
	if w > 4 {
		title = truncate(title, w-2)
	} else {
		title = ""
	}
	titleEnd := x + 1 + textWidth(title)
	legendStart := x + w - 1 - legend
	horizontal := string(hz)
	for cx := x + 1; cx < x+w-1; cx++ {
		if (cx >= titleEnd || title == "") && cx < legendStart {
			screen.Put(cx, y, horizontal, style)
		}
		screen.Put(cx, y+h-1, horizontal, style)
	}
	vertical := string(vt)
	for cy := y + 1; cy < y+h-1; cy++ {
		screen.Put(x, cy, vertical, style)
		screen.Put(x+w-1, cy, vertical, style)
	}
	put(x, y, tl)
	put(x+w-1, y, tr)
	put(x, y+h-1, bl)
	put(x+w-1, y+h-1, br)
	if title != "" {
		titleStyle := th.base
		if focused {
			titleStyle = th.strong
		}
		drawText(screen, x+1, y, w-2, title, titleStyle)
	}
}
