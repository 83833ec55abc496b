package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/format"
)

// The bond list (b, and at start on a host with several bonds): every
// bond in natural order (bond2 before bond10) with its mode, slaves up of
// total, tx and rx rates and its worst finding, so the busy or broken
// bond is found without opening each. ↑ ↓ PgUp PgDn Home End move the
// cursor, which stays on screen; / filters by name; Enter picks.

// chooserState is the list's own state. The cursor is the name under it,
// so it stays on its bond while the list or the filter changes.
type chooserState struct {
	cursor    string
	filter    string
	filtering bool // typing after /
	// top is the first row shown and page how many fit: the list scrolls
	// its rows itself, under a heading that stays.
	top, page int
}

// chooserHead is the number of lines above the rows.
const chooserHead = 3

// listed are the bonds in the list's order: natural, or the source's
// (Options.ListOrder), a bond the source's order lacks after the rest.
// The source's order is ranked once a snapshot (dashboard.ordered).
func (d *dashboard) listed() []string {
	if d.listOrder == nil {
		return d.model.Bonds()
	}
	if d.ordered == nil {
		d.ordered = d.rank()
	}
	return d.ordered
}

// rank puts the Model's bonds in the source's order.
func (d *dashboard) rank() []string {
	out := slices.Clone(d.model.Bonds())
	rank := map[string]int{}
	for i, name := range d.listOrder() {
		rank[name] = i + 1
	}
	at := func(name string) int {
		if r := rank[name]; r > 0 {
			return r
		}
		return len(rank) + 1
	}
	slices.SortStableFunc(out, func(x, y string) int { return at(x) - at(y) })
	return out
}

// chooserRows are the bonds the filter lets through, in the list's order.
func (d *dashboard) chooserRows() []string {
	var out []string
	for _, name := range d.listed() {
		if strings.Contains(name, d.chooser.filter) {
			out = append(out, name)
		}
	}
	return out
}

// stepBond moves the selection by delta bonds in the list's order,
// wrapping around ([ and ]).
func (d *dashboard) stepBond(delta int) {
	if d.listOrder == nil {
		d.model.StepBond(delta)
		return
	}
	rows := d.listed()
	if len(rows) == 0 {
		return
	}
	i := slices.Index(rows, d.model.Bond)
	if i < 0 {
		i = 0
		if delta > 0 {
			delta--
		}
	}
	d.model.SelectBondNamed(rows[((i+delta)%len(rows)+len(rows))%len(rows)])
}

// bondIndex is the selected bond's place in the list's order, or -1.
func (d *dashboard) bondIndex() int { return slices.Index(d.listed(), d.model.Bond) }

// chooserIndex is the cursor's row (the first row when its bond is not
// listed), -1 when no row is.
func (d *dashboard) chooserIndex(rows []string) int {
	if len(rows) == 0 {
		return -1
	}
	return max(slices.Index(rows, d.chooser.cursor), 0)
}

// openChooser opens the list with the cursor on the bond on screen.
func (d *dashboard) openChooser() {
	d.chooser = chooserState{cursor: d.model.Bond}
	d.openOverlay(overlayChooser)
}

// chooserKey handles the keys of the open list; q and ? (unless typed
// into the filter) are left to the overlay's key map.
func (d *dashboard) chooserKey(ev *tcell.EventKey) bool {
	if ev.Key() == tcell.KeyRune && !d.chooser.filtering && (ev.Rune() == 'q' || ev.Rune() == '?') {
		return false
	}
	rows := d.chooserRows()
	i := d.chooserIndex(rows)
	pick := func(name string) {
		if d.model.SelectBondNamed(name) {
			d.chooser.filtering = false
			d.closeOverlay()
		}
	}
	switch {
	case ev.Key() == tcell.KeyEnter:
		if i >= 0 {
			pick(rows[i])
		}
		return true
	case d.chooser.filtering && (ev.Key() == tcell.KeyBackspace || ev.Key() == tcell.KeyBackspace2):
		if f := d.chooser.filter; f != "" {
			d.chooser.filter = f[:len(f)-1]
		} else {
			d.chooser.filtering = false
		}
		return true
	case ev.Key() == tcell.KeyRune && ev.Rune() == '/' && !d.chooser.filtering:
		d.chooser.filtering = true
		return true
	case ev.Key() == tcell.KeyRune && d.chooser.filtering:
		d.chooser.filter += string(ev.Rune())
		return true
	case ev.Key() == tcell.KeyRune && ev.Rune() >= '1' && ev.Rune() <= '9':
		if len(rows) <= 9 {
			// Few bonds: a digit picks the numbered row.
			if n := int(ev.Rune() - '1'); n < len(rows) {
				pick(rows[n])
			}
			return true
		}
		// Many bonds: digits find a bond by the number in its name.
		d.chooser.filtering = true
		d.chooser.filter += string(ev.Rune())
		return true
	}
	if i < 0 {
		return true
	}
	j := scroll(i, ev, max(d.chooser.page, 1)+1, len(rows)-1)
	d.chooser.cursor = rows[j]
	return true
}

// chooserEscape handles Esc: it ends the filter first, then closes the
// list. It reports whether the list stays open.
func (d *dashboard) chooserEscape() bool {
	if d.chooser.filtering || d.chooser.filter != "" {
		d.chooser.filtering, d.chooser.filter = false, ""
		return true
	}
	return false
}

// renderChooser lists the bonds that fit, the cursor's row among them.
func (d *dashboard) renderChooser(width, height int) []line {
	m, th := d.model, d.th
	rows := d.chooserRows()
	cur := d.chooserIndex(rows)
	keys := "↑↓ PgUp PgDn move, Enter picks, / filters, Esc closes"
	if len(rows) <= 9 {
		keys = "↑↓ or 1-9 and Enter picks, / filters, Esc closes"
	}
	out := []line{
		{{fmt.Sprintf("%d bonds: choose one", len(m.Bonds())), th.strong}, {"  " + keys, th.dim}},
	}
	switch {
	case d.chooser.filtering:
		out = append(out, line{{"filter: ", th.dim}, {d.chooser.filter + "_", th.strong}, {fmt.Sprintf("  %d match", len(rows)), th.dim}})
	case d.chooser.filter != "":
		out = append(out, line{{"filter: ", th.dim}, {d.chooser.filter, th.strong}, {fmt.Sprintf("  %d match (Esc clears)", len(rows)), th.dim}})
	default:
		out = append(out, nil)
	}
	nameW := len("BOND")
	for _, name := range rows {
		nameW = max(nameW, len(name))
	}
	numbered := len(rows) <= 9
	num := func(i int) string {
		if numbered {
			return strconv.Itoa(i+1) + " "
		}
		return ""
	}
	blank := strings.Repeat(" ", len(num(0)))
	out = append(out, line{{" " + blank + padRight("BOND", nameW) + "  " + padRight("MODE", 13) + padLeft("UP", 5) + padLeft("TX", 8) + padLeft("RX", 8) + "  WORST FINDING", th.heading}})
	// Only the rows that fit, the cursor's among them.
	page := len(rows)
	if height > chooserHead {
		page = max(height-chooserHead, 1)
	}
	top := min(d.chooser.top, max(cur, 0))
	if cur >= top+page {
		top = cur - page + 1
	}
	top = max(min(top, len(rows)-page), 0)
	d.chooser.top, d.chooser.page = top, page
	d.overlay.offset = 0
	if len(rows) > page {
		out[1] = append(out[1], span{fmt.Sprintf("  rows %d-%d of %d", top+1, min(top+page, len(rows)), len(rows)), th.dim})
	}
	for i := top; i < len(rows) && i < top+page; i++ {
		name := rows[i]
		b := m.lastSeen[name].sample
		row := line{{" " + num(i) + padRight(name, nameW) + "  ", th.base}}
		if b == nil || m.Snap == nil || m.Snap.Bond(name) == nil {
			row = row.add("gone", th.bad)
		} else {
			row = append(row, d.chooserRow(b)...)
		}
		if i == cur {
			for k := range row {
				row[k].style = th.selected
			}
		}
		out = append(out, row)
	}
	if len(rows) == 0 {
		out = append(out, line{{"  no bond matches " + strconv.Quote(d.chooser.filter), th.dim}})
	}
	return out
}

// chooserRow is a bond at a glance: mode, slaves up of total, rates and
// the worst finding.
func (d *dashboard) chooserRow(b *model.BondSample) line {
	th := d.th
	up := 0
	for i := range b.Slaves {
		if format.Deref(b.Slaves[i].MIIStatus) == "up" {
			up++
		}
	}
	upStyle := th.base
	if up < len(b.Slaves) {
		upStyle = th.bad
	}
	out := line{
		{padRight(truncate(format.OrDash(b.Mode), 13), 13), th.base},
		{padLeft(fmt.Sprintf("%d/%d", up, len(b.Slaves)), 5), upStyle},
		{padLeft(format.Short(b.TxBps), 8), th.base},
		{padLeft(format.Short(b.RxBps), 8), th.base},
		{"  ", th.base},
	}
	if len(b.Findings) == 0 {
		return out.add("-", th.dim)
	}
	f := b.Findings[0] // worst first
	tag, st := d.severityStyle(f.Severity)
	return out.add(tag+" ", st).add(f.Message, th.base)
}
