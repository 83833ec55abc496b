package ui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// The mouse, as an htop user expects it (off with --no-mouse): a click
// focuses the panel under it and, in the slaves table, selects the row;
// the wheel moves the table's cursor and scrolls the LACP and events
// panels and the open overlay (the bond list's cursor, the diagnosis's
// finding); a click on a row of the bond list picks that bond.

// wheelKey is the key a wheel notch stands for.
func wheelKey(action tview.MouseAction) (tcell.Key, bool) {
	switch action {
	case tview.MouseScrollUp:
		return tcell.KeyUp, true
	case tview.MouseScrollDown:
		return tcell.KeyDown, true
	}
	return 0, false
}

// MouseHandler implements tview.Primitive: an open overlay takes the
// mouse; otherwise the panel under the pointer does.
func (l *screenLayout) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
	return l.WrapMouseHandler(func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
		d := l.d
		mx, my := event.Position()
		if d.overlayName != "" {
			if d.overlay.InRect(mx, my) {
				d.overlayMouse(action, my)
			}
			return true, nil // the panels behind an overlay stay still
		}
		for _, c := range []struct {
			shown bool
			p     tview.Primitive
		}{
			{d.visible.table.visible(), d.table},
			{d.visible.side.visible(), d.side},
			{d.visible.events.visible(), d.events},
		} {
			if !c.shown {
				continue
			}
			if box, ok := c.p.(interface{ InRect(x, y int) bool }); ok && box.InRect(mx, my) {
				return c.p.MouseHandler()(action, event, setFocus)
			}
		}
		return false, nil
	})
}

// overlayMouse: the wheel does what ↑ ↓ do in the overlay; a click on a
// row of the bond list picks it.
func (d *dashboard) overlayMouse(action tview.MouseAction, my int) {
	if k, ok := wheelKey(action); ok {
		ev := tcell.NewEventKey(k, 0, tcell.ModNone)
		if !d.panelKey(ev) {
			d.overlay.offset = scroll(d.overlay.offset, ev, d.overlay.shown, max(d.overlay.total-d.overlay.shown, 0))
		}
		return
	}
	if action != tview.MouseLeftClick || d.overlayName != overlayChooser {
		return
	}
	_, iy, _, _ := d.overlay.GetInnerRect()
	rows := d.chooserRows()
	if i := my - iy - chooserHead + d.chooser.top; my-iy >= chooserHead && i < len(rows) {
		d.chooser.cursor = rows[i]
		d.chooserKey(tcell.NewEventKey(tcell.KeyEnter, 0, tcell.ModNone))
	}
}

// MouseHandler implements tview.Primitive: a click focuses the table and
// selects the row under it; the wheel moves the cursor.
func (t *slaveTable) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
	return t.WrapMouseHandler(func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
		mx, my := event.Position()
		if !t.InRect(mx, my) {
			return false, nil
		}
		if k, ok := wheelKey(action); ok {
			if len(t.rows) > 0 {
				_, _, _, h := t.GetInnerRect()
				t.selected = t.rows[scroll(t.cursor(t.rows), tcell.NewEventKey(k, 0, tcell.ModNone), h-1, len(t.rows)-1)].Name
			}
			return true, nil
		}
		if action != tview.MouseLeftClick {
			return false, nil
		}
		setFocus(t)
		_, y, _, _ := t.GetInnerRect()
		// Rows start under the column header.
		if i := t.offset + my - y - 1; my > y && i >= 0 && i < len(t.rows) {
			t.selected = t.rows[i].Name
		}
		return true, t
	})
}

// MouseHandler implements tview.Primitive: a scrollable panel takes the
// focus on a click and scrolls with the wheel.
func (v *linesView) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
	return v.WrapMouseHandler(func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
		if !v.scrollable || !v.InRect(event.Position()) {
			return false, nil
		}
		if k, ok := wheelKey(action); ok {
			v.offset = scroll(v.offset, tcell.NewEventKey(k, 0, tcell.ModNone), v.shown, max(v.total-v.shown, 0))
			return true, nil
		}
		if action == tview.MouseLeftClick {
			setFocus(v)
			return true, v
		}
		return false, nil
	})
}
