package ui

import (
	"strings"

	"github.com/bondtop/bondtop/ui/term"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"
)

// span is a run of text in one style; a line is what one screen row shows.
// Views build lines from the Model and draw them: no markup to escape, and
// a style per character where a cell needs it (the LACP flags).
type span struct {
	text  string
	style *tcell.Style // the theme's, or one made for the span (styleOf)
}

type line []span

// add appends a span and returns the line, for building in one expression.
func (l line) add(text string, style *tcell.Style) line {
	return append(l, span{text, style})
}

// textWidth is the number of screen columns s takes. Printable ASCII,
// most of what the dashboard shows, is one column a byte; only other text
// pays for uniseg's grapheme parsing (a third of a frame's measuring).
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return uniseg.StringWidth(s)
		}
	}
	return len(s)
}

// width is the number of screen columns the line takes.
func (l line) width() int {
	w := 0
	for _, s := range l {
		w += textWidth(s.text)
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
func drawText(screen tcell.Screen, x, y, maxWidth int, text string, stylePtr *tcell.Style) int {
	style := styleValue(stylePtr)
	used := 0
	state := -1
	q, quiet := screen.(*term.Screen)
	for text != "" && used < maxWidth {
		if term.ASCIICell(text) {
			n := 1
			if quiet {
				for n < len(text) && used+n < maxWidth && term.ASCIICell(text[n:]) {
					n++
				}
				q.PutASCII(x+used, y, text[:n], style)
			} else {
				screen.Put(x+used, y, text[:1], style)
			}
			text = text[n:]
			used += n
			state = -1
			continue
		}
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
func fill(screen tcell.Screen, x, y, width int, stylePtr *tcell.Style) {
	style := styleValue(stylePtr)
	if q, ok := screen.(*term.Screen); ok && width <= len(blanks) {
		q.PutASCII(x, y, spaces(width), style)
		return
	}
	for i := range max(width, 0) {
		screen.Put(x+i, y, " ", style)
	}
}

// blanks is what pads are cut from: a padded text is then one
// concatenation, not one per space (the flows view pads hundreds of
// addresses to 50 columns on every frame).
var blanks = strings.Repeat(" ", 256)

// spaces is n spaces.
func spaces(n int) string {
	if n <= len(blanks) {
		return blanks[:max(n, 0)]
	}
	return strings.Repeat(" ", n)
}

// padRight returns s padded with spaces to width columns (never cut).
func padRight(s string, width int) string {
	if w := textWidth(s); w < width {
		return s + spaces(width-w)
	}
	return s
}

// padLeft right-aligns s in width columns (never cut).
func padLeft(s string, width int) string {
	if w := textWidth(s); w < width {
		return spaces(width-w) + s
	}
	return s
}

// truncate cuts s to width columns, marking the cut with "…".
func truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if textWidth(s) <= width {
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

// wrap breaks text into lines of at most width columns at spaces; a word
// longer than width is cut. Lines after the first start with indent.
func wrap(text string, width int, indent string) []string {
	if width <= len(indent)+1 || textWidth(text) <= width {
		return []string{text}
	}
	var out []string
	cur := ""
	for _, word := range strings.Fields(text) {
		switch {
		case cur == "":
			cur = word
		case textWidth(cur)+1+textWidth(word) <= width:
			cur += " " + word
		default:
			out = append(out, cur)
			cur = indent + word
		}
		for textWidth(cur) > width {
			out = append(out, truncateExact(cur, width))
			cur = indent + cur[len(truncateExact(cur, width)):]
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// truncateExact is the longest prefix of s that fits width columns.
func truncateExact(s string, width int) string {
	out, used, state := "", 0, -1
	for s != "" {
		var cluster string
		var w int
		cluster, s, w, state = uniseg.FirstGraphemeClusterInString(s, state)
		if used+w > width {
			break
		}
		out += cluster
		used += w
	}
	return out
}
