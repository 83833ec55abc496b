package ui

import (
	"math"
	"slices"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/ui/format"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// historyReader is the part of collector.History the graphs read.
type historyReader interface {
	Since(k collector.Series, t time.Time) []collector.Point
}

// chartLine is one series of a chart and how it is drawn.
type chartLine struct {
	label string
	style *tcell.Style
	key   collector.Series
}

// trafficChart is a braille line chart of bit rates over a time window:
// each screen cell holds 2x4 dots, so an 33-column plot resolves 66
// instants. It embeds tview.Box for the border, title and focus, and draws
// the rest itself: a y axis with SI labels, a relative time axis, and a
// legend on the top border in each line's colour.
type trafficChart struct {
	*tview.Box
	th *theme

	hist     historyReader
	lines    []chartLine
	from, to time.Time

	// peaks caches each series' columns between draws.
	peaks map[collector.Series]*slotPeaks
	// The legend last drawn, for legendRoom columns and the lines
	// legendOf (the same slice as lines while the bond and its slaves
	// stay the same).
	legendLine line
	legendRoom int
	legendOf   []chartLine
	// Scratch space reused from draw to draw.
	dots  []uint8 // braille bits per plot cell
	owner []int8  // which line last set a dot in the cell
}

func newTrafficChart(th *theme, title string) *trafficChart {
	c := &trafficChart{Box: tview.NewBox(), th: th, peaks: make(map[collector.Series]*slotPeaks)}
	c.SetBorder(true).SetTitle(" " + title + " ").SetTitleAlign(tview.AlignLeft)
	c.SetBackgroundColor(tcell.ColorDefault)
	c.SetBorderColor(th.border).SetTitleColor(tcell.ColorDefault)
	return c
}

// show sets what the next draw plots: lines from hist over [from, to].
func (c *trafficChart) show(hist historyReader, lines []chartLine, from, to time.Time) {
	c.hist, c.lines, c.from, c.to = hist, lines, from, to
}

// yLabelWidth holds the widest units.Short label ("1.23G") and a space.
const yLabelWidth = 6

// brailleCells are the 256 braille patterns as strings, made once: a
// chart puts thousands a second.
var brailleCells = func() (cells [256]string) {
	for i := range cells {
		cells[i] = string(rune(0x2800 + i))
	}
	return cells
}()

// Braille dot bits by (column, row) inside a cell (Unicode U+2800 block).
var brailleBits = [2][4]uint8{{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}}

// Draw draws the chart; it is called by tview on the event loop.
func (c *trafficChart) Draw(screen tcell.Screen) {
	legend := c.legend()
	drawFrame(screen, c.Box, c.GetTitle(), legend.width(), false, false, c.th)
	if len(legend) > 0 {
		bx, by, bw, _ := c.GetRect()
		w := legend.width()
		drawLine(screen, bx+bw-1-w, by, w, legend)
	}
	x, y, w, h := c.GetInnerRect()
	if c.hist == nil || w < yLabelWidth+4 || h < 2 || !c.to.After(c.from) {
		return
	}
	plotRows := h - 1 // the last row is the time axis
	plotCols := w - yLabelWidth
	dotCols, dotRows := plotCols*2, plotRows*4
	from, to := alignWindow(c.from, c.to, dotCols)

	// Bucket each line into dot columns: the peak of the samples falling
	// in a column, so a one-second burst survives the 1 h window.
	perLine := make([][]float32, len(c.lines))
	peak := float32(0)
	for i, ln := range c.lines {
		sp := c.peaks[ln.key]
		if sp == nil {
			sp = &slotPeaks{}
			c.peaks[ln.key] = sp
		}
		cols := sp.columns(c.hist, ln.key, from, to, dotCols)
		perLine[i] = cols
		for _, v := range cols {
			if !isNaN(v) && v > peak {
				peak = v
			}
		}
	}
	if len(c.peaks) > len(c.lines) {
		// Another bond selected: forget the series no longer drawn.
		for k := range c.peaks {
			if !slices.ContainsFunc(c.lines, func(l chartLine) bool { return l.key == k }) {
				delete(c.peaks, k)
			}
		}
	}
	scale := niceCeil(float64(peak))

	n := plotCols * plotRows
	c.dots = resize(c.dots, n)
	c.owner = resizeInt8(c.owner, n)
	clear(c.dots)
	set := func(dx, dy, line int) {
		if dx < 0 || dx >= dotCols || dy < 0 || dy >= dotRows {
			return
		}
		cell := dy/4*plotCols + dx/2
		c.dots[cell] |= brailleBits[dx%2][dy%4]
		c.owner[cell] = int8(line)
	}
	toDotY := func(v float32) int {
		r := int(math.Round(float64(v) / scale * float64(dotRows-1)))
		return dotRows - 1 - min(max(r, 0), dotRows-1)
	}
	for li, cols := range perLine {
		lastCol, lastY := -1, 0
		for col, v := range cols {
			switch {
			case v == colEmpty:
				continue // no sample here: the line bridges it
			case isNaN(v):
				lastCol = -1 // an unknown rate is a gap, never a false zero
				continue
			}
			dy := toDotY(v)
			if lastCol < 0 {
				set(col, dy, li)
			} else {
				prevY := lastY
				for k := lastCol + 1; k <= col; k++ {
					ky := lastY + (dy-lastY)*(k-lastCol)/(col-lastCol)
					lo, hi := min(prevY, ky), max(prevY, ky)
					for yy := lo; yy <= hi; yy++ {
						set(k, yy, li)
					}
					// the step's vertical run belongs to column k only
					prevY = ky
				}
			}
			lastCol, lastY = col, dy
		}
	}
	for row := range plotRows {
		for col := range plotCols {
			i := row*plotCols + col
			if c.dots[i] == 0 {
				continue
			}
			screen.Put(x+yLabelWidth+col, y+row, brailleCells[c.dots[i]], *c.lines[c.owner[i]].style)
		}
	}

	// The y axis: full scale, half scale (room permitting), zero.
	label := func(row int, v float64) {
		drawText(screen, x, y+row, yLabelWidth-1, padLeft(units.Short(v), yLabelWidth-1), c.th.dim)
	}
	label(0, scale)
	if plotRows >= 3 && plotRows%2 == 1 {
		// Only where a row sits exactly at half scale: "6.67G" helps no one.
		label(plotRows/2, scale/2)
	}
	if plotRows >= 2 {
		label(plotRows-1, 0)
	}

	// The time axis, relative to the snapshot on screen.
	span := c.to.Sub(c.from)
	axisY := y + plotRows
	drawText(screen, x+yLabelWidth, axisY, plotCols, "-"+format.Duration(span), c.th.dim)
	if plotCols >= 24 {
		mid := "-" + format.Duration(span/2)
		drawText(screen, x+yLabelWidth+plotCols/2-len(mid)/2, axisY, len(mid), mid, c.th.dim)
	}
	drawText(screen, x+w-3, axisY, 3, "now", c.th.dim)
}

// colEmpty marks a dot column no sample fell in (distinct from NaN, an
// unknown rate).
var colEmpty = float32(math.Inf(-1))

func isNaN(v float32) bool { return v != v }

// alignWindow moves [from, to] forward to the next boundary of a column's
// span of Unix time. Columns are then fixed slots: the picture moves by a
// whole column when a slot fills instead of re-bucketing at every sample,
// so between shifts only the newest column changes. At 100 ms that spares
// the terminal most of its writes, and the eye a shimmer.
func alignWindow(from, to time.Time, dotCols int) (time.Time, time.Time) {
	slot := int64(to.Sub(from)) / int64(dotCols)
	if slot <= 0 {
		return from, to
	}
	end := (to.UnixNano() + slot - 1) / slot * slot
	return time.Unix(0, end-slot*int64(dotCols)), time.Unix(0, end)
}

// legend is "━ bond0 ━ e1 ━ e2", drawn right-aligned on the top border,
// dropping the names that do not fit from the end.
//
// It is made again only when the room or the lines changed.
func (c *trafficChart) legend() line {
	bx, _, bw, _ := c.GetRect()
	titleEnd := bx + 2 + len(c.GetTitle())
	room := bx + bw - 2 - titleEnd
	if c.legendRoom == room && len(c.legendOf) == len(c.lines) && (len(c.lines) == 0 || &c.legendOf[0] == &c.lines[0]) {
		return c.legendLine
	}
	c.legendRoom, c.legendOf = room, c.lines
	c.legendLine = c.makeLegend(room)
	return c.legendLine
}

func (c *trafficChart) makeLegend(room int) line {
	var l line
	for _, ln := range c.lines {
		item := line{{"━", ln.style}, {ln.label + " ", c.th.base}}
		if l.width()+item.width()+1 > room {
			break
		}
		l = append(l, item...)
	}
	if len(l) == 0 {
		return nil
	}
	return append(line{{" ", c.th.base}}, l...)
}

// niceCeil rounds v up to a round number (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8
// times a power of ten), so the axis reads "200M", not "173M", without
// wasting much height; at least 1 kbit/s, so a silent bond still has a
// scale.
func niceCeil(v float64) float64 {
	if v < 1000 {
		return 1000
	}
	exp := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if v <= m*exp*1.0000001 {
			return m * exp
		}
	}
	return 10 * exp
}

func resize(b []uint8, n int) []uint8 {
	if cap(b) < n {
		return make([]uint8, n)
	}
	return b[:n]
}

func resizeInt8(b []int8, n int) []int8 {
	if cap(b) < n {
		return make([]int8, n)
	}
	return b[:n]
}
