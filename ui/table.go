package ui

import (
	"slices"
	"strconv"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/format"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// slaveTable lists the selected bond's slaves, one row each, and keeps a
// selected row (by slave name, so it survives re-sorting) for Enter. It
// picks the columns that fit its width: on a narrow terminal the bars go
// first, then the least telling columns.
type slaveTable struct {
	*tview.Box
	th    *theme
	model *Model
	// selected is the slave the cursor is on; "" is the first row.
	selected string
	offset   int
	// rows is what the last draw listed, for moving the cursor.
	rows []SlaveRow
	// onEnter opens the details of the selected slave.
	onEnter func()
	// cursorScreen draws the cursor's row (see cursorRow).
	cursorScreen cursorScreen
}

func newSlaveTable(th *theme, m *Model) *slaveTable {
	t := &slaveTable{Box: tview.NewBox(), th: th, model: m}
	t.SetBorder(true).SetTitle(" slaves ").SetTitleAlign(tview.AlignLeft)
	t.SetBackgroundColor(tcell.ColorDefault)
	t.SetBorderColor(th.border).SetTitleColor(tcell.ColorDefault)
	return t
}

// The rate columns' priorities.
const (
	priorityRx = 95
	priorityTx = 94
)

// column is one table column: a title, its importance when the width runs
// short (higher stays longer), and the cell of a row.
type column struct {
	title    string
	right    bool
	priority int
	cell     func(r SlaveRow) line
	// barred, for the rate columns, is the cell with a bar barWidth wide
	// (cell is the cell without one): the only cells the bar width
	// changes, so the others are rendered once a frame.
	barred func(r SlaveRow, barWidth int) line
	width  int
}

// selectedSlave is the slave under the cursor, or nil.
func (t *slaveTable) selectedSlave() *model.SlaveSample {
	rows := t.model.Rows()
	if len(rows) == 0 {
		return nil
	}
	return rows[t.cursor(rows)].SlaveSample
}

func (t *slaveTable) cursor(rows []SlaveRow) int {
	for i, r := range rows {
		if r.Name == t.selected {
			return i
		}
	}
	return 0
}

// columns builds the columns that make sense for this bond, the rate
// columns without bars (fit adds them).
func (t *slaveTable) columns(b *model.BondSample) []*column {
	th := t.th
	lacp := b.Is8023AD()
	var activeAgg *int
	if b.LACP != nil {
		activeAgg = b.LACP.AggregatorID
	}
	// Bars are scaled to the slave's link speed when known: "how full is
	// this link" is the question; else to the busiest slave.
	var busiest float64
	for i := range b.Slaves {
		busiest = max(busiest, orZero(b.Slaves[i].RxBps), orZero(b.Slaves[i].TxBps))
	}
	rate := func(bps *float64, s *model.SlaveSample, barWidth int) line {
		if barWidth == 0 {
			return line{{padLeft(format.Short(bps), 5), th.strong}}
		}
		l := append(make(line, 0, 3), span{padLeft(format.Short(bps), 5), th.strong})
		full := busiest
		if s.SpeedMbps != nil && *s.SpeedMbps > 0 {
			full = float64(*s.SpeedMbps) * 1e6
		}
		frac := 0.0
		if bps != nil && full > 0 {
			frac = *bps / full
		}
		style := th.good
		switch {
		case frac >= 0.9:
			style = th.bad
		case frac >= 0.7:
			style = th.warn
		}
		if th.mono {
			style = th.base
		}
		return l.add(" ", th.base).add(format.Bar(frac, barWidth), style)
	}
	// A rate column's cell without a bar, and with one (fit).
	rateColumn := func(title string, priority int, bps func(r SlaveRow) *float64) *column {
		barred := func(r SlaveRow, barWidth int) line { return rate(bps(r), r.SlaveSample, barWidth) }
		return &column{title: title, priority: priority, barred: barred, cell: func(r SlaveRow) line { return barred(r, 0) }}
	}
	cols := []*column{
		{title: "SLAVE", priority: 100, cell: func(r SlaveRow) line {
			return line{{r.Name, th.slave(r.Index)}}
		}},
		{title: "LINK", priority: 90, cell: func(r SlaveRow) line {
			mii := format.OrDash(r.MIIStatus)
			st := th.good
			if mii != "up" {
				st = th.bad
			}
			return line{{mii, st}, {" " + format.SpeedDuplex(&r.Slave), th.base}}
		}},
		{title: "ROLE", priority: 50, cell: func(r SlaveRow) line {
			role := format.Deref(r.State)
			switch {
			case role == "":
				return line{{"-", th.dim}}
			case role == "active" || lacp:
				// In 802.3ad "backup" means outside the active
				// aggregator; the AGG column says so louder.
				return line{{role, th.base}}
			default:
				return line{{role, th.dim}}
			}
		}},
	}
	cols = append(cols, switchColumn(th, b))
	if lacp {
		cols = append(cols,
			&column{title: "AGG", right: true, priority: 75, cell: func(r SlaveRow) line {
				if r.AggregatorID == nil {
					return line{{"-", th.dim}}
				}
				id := strconv.Itoa(*r.AggregatorID)
				if activeAgg != nil && *r.AggregatorID != *activeAgg {
					// Not in the active aggregator: this slave carries nothing.
					return line{{id + "*", th.bad}}
				}
				return line{{id, th.base}}
			}},
			&column{title: "ACTOR", priority: 55, cell: func(r SlaveRow) line {
				return portFlags(actorState(r.SlaveSample), th)
			}},
			&column{title: "PARTNER", priority: 80, cell: func(r SlaveRow) line {
				return portFlags(partnerState(r.SlaveSample), th)
			}},
		)
	}
	cols = append(cols,
		rateColumn("RX", priorityRx, func(r SlaveRow) *float64 { return r.RxBps }),
		rateColumn("TX", priorityTx, func(r SlaveRow) *float64 { return r.TxBps }),
		&column{title: "RX%", right: true, priority: 70, cell: func(r SlaveRow) line { return line{{format.Percent(r.ShareRx), th.base}} }},
		&column{title: "TX%", right: true, priority: 69, cell: func(r SlaveRow) line { return line{{format.Percent(r.ShareTx), th.base}} }},
		&column{title: "E/D/O", right: true, priority: 60, cell: func(r SlaveRow) line {
			text, any := format.Errors(r.Interval)
			if any {
				return line{{text, th.bad}}
			}
			return line{{text, th.dim}}
		}},
		&column{title: "FAILS", right: true, priority: 40, cell: func(r SlaveRow) line {
			return line{{format.Int(r.LinkFailureCount), th.base}}
		}},
	)
	return cols
}

func actorState(s *model.SlaveSample) *bonding.PortState {
	if s.Actor == nil {
		return nil
	}
	return s.Actor.PortState
}

func partnerState(s *model.SlaveSample) *bonding.PortState {
	if s.Partner == nil {
		return nil
	}
	return s.Partner.PortState
}

// barWidths are the bar sizes tried, widest first.
var barWidths = []int{24, 20, 16, 12, 10, 8, 6, 4}

// fit returns the columns, with their cells, that fit width: the widest
// bars that fit beside every column, else no bars and the least important
// columns dropped. Each cell is rendered once, the rate columns' twice
// when bars fit: their width follows from the bar width (5 digits, a
// space, the bar), so the candidates are weighed by arithmetic, not by
// rendering each.
func (t *slaveTable) fit(b *model.BondSample, rows []SlaveRow, width int) ([]*column, [][]line) {
	cols := dropEmpty(t.columns(b), rows)
	cells, total := measure(cols, rows)
	rateCols := 0
	for _, c := range cols {
		if c.barred != nil {
			rateCols++
		}
	}
	for _, bw := range barWidths {
		if total+rateCols*(1+bw) <= width {
			for j, c := range cols {
				if c.barred == nil {
					continue
				}
				// With bars the column has room for its unit: a
				// narrow screen's rate columns (5 wide) would lose a
				// whole column to it (the header and graphs say bit/s).
				c.title += " bit/s"
				c.width = textWidth(c.title)
				for i, r := range rows {
					cells[i][j] = c.barred(r, bw)
					c.width = max(c.width, cells[i][j].width())
				}
			}
			return cols, cells
		}
	}
	for total > width && len(cols) > 1 {
		lowest := 0
		for i, c := range cols {
			if c.priority < cols[lowest].priority {
				lowest = i
			}
		}
		total -= cols[lowest].width + 1
		cols = slices.Delete(cols, lowest, lowest+1)
		for i := range cells {
			cells[i] = slices.Delete(cells[i], lowest, lowest+1)
		}
	}
	return cols, cells
}

// dropEmpty leaves out columns no slave has a value for (ROLE without
// sysfs, say): a column of dashes says nothing and costs width.
func dropEmpty(cols []*column, rows []SlaveRow) []*column {
	kept := cols[:0]
	for _, c := range cols {
		empty := len(rows) > 0
		for _, r := range rows {
			if l := c.cell(r); len(l) != 1 || l[0].text != "-" {
				empty = false
				break
			}
		}
		if !empty {
			kept = append(kept, c)
		}
	}
	return kept
}

// measure renders every cell and sets each column's width; total counts
// one space between columns.
func measure(cols []*column, rows []SlaveRow) ([][]line, int) {
	cells := make([][]line, len(rows))
	for i := range rows {
		cells[i] = make([]line, len(cols))
	}
	total := 0
	for j, c := range cols {
		c.width = textWidth(c.title)
		for i, r := range rows {
			cells[i][j] = c.cell(r)
			c.width = max(c.width, cells[i][j].width())
		}
		total += c.width
		if j > 0 {
			total++
		}
	}
	return cells, total
}

// Draw implements tview.Primitive.
func (t *slaveTable) Draw(screen tcell.Screen) {
	m := t.model
	b := m.Selected()
	t.SetTitle(" slaves ")
	if b != nil {
		t.SetTitle(" " + b.Name + " slaves, sort " + m.Sort.String() + " ")
	}
	drawFrame(screen, t.Box, t.GetTitle(), 0, t.HasFocus(), false, t.th)
	x, y, w, h := t.GetInnerRect()
	if w <= 0 || h <= 0 {
		return
	}
	if b == nil {
		t.rows = nil
		drawLine(screen, x, y, w, t.emptyMessage())
		return
	}
	rows := m.Rows()
	t.rows = rows
	if len(rows) == 0 {
		drawText(screen, x, y, w, "no slaves enslaved", t.th.warn)
		return
	}
	cols, cells := t.fit(b, rows, w)
	// The header row.
	cx := x
	for _, c := range cols {
		title := c.title
		if c.right {
			title = padLeft(title, c.width)
		}
		drawText(screen, cx, y, c.width, title, t.th.heading)
		cx += c.width + 1
	}
	cur := t.cursor(rows)
	visible := h - 1
	if visible <= 0 {
		return
	}
	t.offset = min(max(t.offset, cur-visible+1), cur)
	t.offset = max(t.offset, 0)
	for i := 0; i < visible && t.offset+i < len(rows); i++ {
		ri := t.offset + i
		rowY := y + 1 + i
		cx := x
		screen := screen
		if ri == cur {
			screen = t.cursorRow(screen)
		}
		for j, c := range cols {
			l := cells[ri][j]
			room, used := min(c.width, x+w-cx), 0
			if c.right {
				// The pad drawn first, as drawLine would draw it as the
				// line's first span, without a new line a cell.
				used = drawText(screen, cx, rowY, room, spaces(c.width-l.width()), t.th.base)
			}
			if used < room {
				used += drawLine(screen, cx+used, rowY, room-used, l)
			}
			// Pad the cell and the gap after it: no older frame's text
			// may remain, and the cursor's colours reach the last column.
			fill(screen, cx+used, rowY, min(c.width+1-used, x+w-cx-used), t.th.base)
			cx += c.width + 1
		}
		fill(screen, cx, rowY, x+w-cx, t.th.base)
	}
}

// cursorRow is screen for drawing the cursor's row: reverse video while
// the table has focus, underlined otherwise, so the row Enter opens stays
// visible. Each cell of the row is written once, in its final style
// (restyling the row once drawn wrote every cell twice, each time through
// tcell's locking and grapheme parsing).
func (t *slaveTable) cursorRow(screen tcell.Screen) tcell.Screen {
	t.cursorScreen = cursorScreen{Screen: screen, focused: t.HasFocus(), selected: *t.th.selected}
	return &t.cursorScreen
}

// cursorScreen is a screen whose writes take the cursor row's style.
type cursorScreen struct {
	tcell.Screen
	focused  bool
	selected tcell.Style
}

// Put implements tcell.Screen (drawText and fill write with it).
func (c *cursorScreen) Put(x, y int, str string, style tcell.Style) (string, int) {
	if c.focused {
		style = c.selected // like htop: the whole row in the cursor's colours
	} else {
		style = style.Underline(true)
	}
	return c.Screen.Put(x, y, str, style)
}

func (t *slaveTable) emptyMessage() line {
	m := t.model
	if since, gone := m.GoneSince(); gone {
		return line{{m.Bond + " is gone since " + since.Format("15:04:05") + ": deleted, or the bonding driver unloaded. Waiting for it.", t.th.bad}}
	}
	switch {
	case m.Snap == nil:
		return line{{"waiting for the first sample…", t.th.dim}}
	case len(m.Bonds()) == 0 && len(m.Snap.Warnings) > 0:
		// Why, when the source says (the fleet: what Prometheus holds).
		return line{{"no bonds: " + m.Snap.Warnings[len(m.Snap.Warnings)-1], t.th.warn}}
	case len(m.Bonds()) == 0:
		return line{{"no bonds on this host: waiting for one to appear", t.th.warn}}
	default:
		return line{{"choose a bond: 1-9, [ or ]", t.th.warn}}
	}
}

// InputHandler moves the cursor; Enter opens the slave's details.
func (t *slaveTable) InputHandler() func(event *tcell.EventKey, setFocus func(p tview.Primitive)) {
	return t.WrapInputHandler(func(event *tcell.EventKey, _ func(p tview.Primitive)) {
		rows := t.rows
		if len(rows) == 0 {
			return
		}
		if event.Key() == tcell.KeyEnter {
			if t.onEnter != nil {
				t.onEnter()
			}
			return
		}
		_, _, _, h := t.GetInnerRect()
		cur := scroll(t.cursor(rows), event, h-1, len(rows)-1)
		t.selected = rows[cur].Name
	})
}
