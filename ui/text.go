package ui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"
)

// span is a run of text in one style; a line is what one screen row shows.
// Views build lines from the Model and draw them: no markup to escape, and
// a style per character where a cell needs it (the LACP flags).
type span struct {
	text  string
	style tcell.Style
}

type line []span

// add appends a span and returns the line, for building in one expression.
func (l line) add(text string, style tcell.Style) line {
	return append(l, span{text, style})
}

// width is the number of screen columns the line takes.
func (l line) width() int {
	w := 0
	for _, s := range l {
		w += uniseg.StringWidth(s.text)
	}
	return w
}

// drawLine writes l at (x, y), clipped to maxWidth columns, and returns the
// columns used. A wide character that would straddle the edge is left out
// rather than cut.
func drawLine(screen tcell.Screen, x, y, maxWidth int, l line) int {
	used := 0
	for _, s := range l {
		n := drawText(screen, x+used, y, maxWidth-used, s.text, s.style)
		used += n
		if used >= maxWidth {
			break
		}
	}
	return used
}

// drawText writes text at (x, y) in one style, clipped to maxWidth columns.
func drawText(screen tcell.Screen, x, y, maxWidth int, text string, style tcell.Style) int {
	used := 0
	state := -1
	for text != "" && used < maxWidth {
		var cluster string
		var w int
		cluster, text, w, state = uniseg.FirstGraphemeClusterInString(text, state)
		if w == 0 {
			continue
		}
		if used+w > maxWidth {
			break
		}
		screen.Put(x+used, y, cluster, style)
		used += w
	}
	return used
}

// fill paints width columns from (x, y) with spaces in style: selected rows
// and bars need their background to reach the end.
func fill(screen tcell.Screen, x, y, width int, style tcell.Style) {
	for i := range width {
		screen.Put(x+i, y, " ", style)
	}
}

// padRight returns s padded with spaces to width columns (never cut).
func padRight(s string, width int) string {
	for w := uniseg.StringWidth(s); w < width; w++ {
		s += " "
	}
	return s
}

// padLeft right-aligns s in width columns (never cut).
func padLeft(s string, width int) string {
	w := uniseg.StringWidth(s)
	if w >= width {
		return s
	}
	pad := make([]byte, width-w)
	for i := range pad {
		pad[i] = ' '
	}
	return string(pad) + s
}

// truncate cuts s to width columns, marking the cut with "…".
func truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if uniseg.StringWidth(s) <= width {
		return s
	}
	out := ""
	used := 0
	state := -1
	for s != "" {
		var cluster string
		var w int
		cluster, s, w, state = uniseg.FirstGraphemeClusterInString(s, state)
		if used+w > width-1 {
			break
		}
		out += cluster
		used += w
	}
	return out + "…"
}
