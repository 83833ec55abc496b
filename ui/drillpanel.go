package ui

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/bondtop/bondtop/drill"
	"github.com/bondtop/bondtop/loadrun"
)

// The failover drill, from the load panel: Ctrl-F there drills the
// selected bond against the form's server (the same bondtop serve or
// iperf3 -s the load test uses). The drill is package drill's, the one
// `bondtop drill` runs: this file asks before anything changes (the
// confirmation names the slave and what happens to it), follows the run
// and shows the result. Prepare and Run wait on the network and the
// kernel, so they run off the event loop and answer through post.

// Driller prepares failover drills. A LoadRunner that can drill (loadrun.Live)
// is one; the demo and --root cannot.
type Driller interface {
	PrepareDrill(ctx context.Context, o drill.Options) (loadrun.PreparedDrill, error)
}

// drillStep is where the panel's drill is.
type drillStep int

const (
	drillOff      drillStep = iota
	drillPlanning           // Prepare runs
	drillConfirm            // the plan is shown: y runs it
	drillRunning
	drillDone
)

// drillState is the load panel's drill.
type drillState struct {
	step     drillStep
	gen      int // tells a late answer from a cancelled drill's
	plan     loadrun.PreparedDrill
	progress []string
	result   *drill.Result
	err      error
	cancel   context.CancelFunc
}

// openDrill plans a drill of the selected bond against the form's server.
func (d *dashboard) openDrill() {
	p := d.loadp
	dr, ok := p.runner.(Driller)
	st := &p.drill
	if st.step == drillPlanning || st.step == drillRunning {
		return // one at a time; the panel shows it
	}
	*st = drillState{step: drillPlanning, gen: st.gen + 1}
	switch {
	case !ok:
		st.step, st.err = drillDone, errors.New("the failover drill acts on a live bond: run bondtop on the host that has it")
		return
	case d.model.Bond == "":
		st.step, st.err = drillDone, errors.New("choose a bond first")
		return
	case strings.TrimSpace(p.text[fieldTarget]) == "":
		st.step, st.err = drillDone, errors.New("give the target (a host running bondtop serve or iperf3 -s) in the form first: the drill's measuring stream goes there")
		return
	}
	peer := strings.TrimSpace(p.text[fieldTarget])
	if port := strings.TrimSpace(p.text[fieldPort]); port != "" && !strings.Contains(peer, ":") {
		peer += ":" + port
	}
	o := drill.Options{Bond: d.model.Bond, Peer: peer}
	gen, ctx := st.gen, d.ctx
	go func() {
		plan, err := dr.PrepareDrill(ctx, o)
		d.post(func() {
			if p.drill.gen != gen || p.drill.step != drillPlanning {
				return
			}
			p.drill.plan, p.drill.err, p.drill.step = plan, err, drillConfirm
			if err != nil {
				p.drill.step = drillDone
			}
		})
	}()
}

// runDrill carries out the confirmed plan.
func (d *dashboard) runDrill() {
	p := d.loadp
	st := &p.drill
	ctx, cancel := context.WithCancel(d.ctx)
	st.step, st.cancel = drillRunning, cancel
	gen, plan := st.gen, st.plan
	release := d.cores.Acquire()
	go func() {
		defer release()
		res, err := plan.Run(ctx, func(s string) {
			d.post(func() {
				if p.drill.gen == gen {
					p.drill.progress = append(p.drill.progress, s)
				}
			})
		})
		cancel()
		d.post(func() {
			if p.drill.gen == gen {
				p.drill.result, p.drill.err, p.drill.step = res, err, drillDone
			}
		})
	}()
}

// drillKey handles the keys while the panel shows the drill; false passes
// the key on (Esc closes the panel, the drill goes on).
func (d *dashboard) drillKey(ev *tcell.EventKey) bool {
	st := &d.loadp.drill
	r := rune(0)
	if ev.Key() == tcell.KeyRune {
		r = ev.Rune()
	}
	switch st.step {
	case drillConfirm:
		switch {
		case r == 'y' || r == 'Y':
			d.runDrill()
		case r == 'n' || r == 'N':
			st.step = drillOff
		default:
			return false
		}
	case drillRunning:
		if r != 'x' {
			return false
		}
		st.cancel() // the drill restores the bond before it returns
	case drillDone, drillPlanning:
		if r != 'n' && ev.Key() != tcell.KeyEnter {
			return false
		}
		if st.step == drillPlanning {
			st.gen++
		}
		st.step = drillOff
	}
	return true
}

func (d *dashboard) renderDrill(width int) []line {
	th, st := d.th, &d.loadp.drill
	out := []line{{{"Failover drill of " + orText(d.model.Bond, "no bond"), th.strong}}, nil}
	text := func(s string, style *tcell.Style) {
		for _, row := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
			for _, w := range wrap(row, width, "    ") {
				out = append(out, line{{w, style}})
			}
		}
	}
	switch st.step {
	case drillPlanning:
		text("planning: reading the bond, resolving the peer…", th.dim)
		out = append(out, nil, line{{"n", th.key}, {" cancel", th.base}})
	case drillConfirm:
		text(st.plan.Describe(), th.base)
		out = append(out, nil, line{{"This takes a link of the bond away. ", th.warn}, {"y", th.key}, {" run the drill  ", th.base}, {"n", th.key}, {" cancel", th.base}})
	case drillRunning:
		for _, s := range st.progress {
			text("• "+s, th.base)
		}
		out = append(out, nil, line{{"x", th.key}, {" stop (the bond is put back as it was)", th.base}})
	case drillDone:
		if st.result != nil {
			var b bytes.Buffer
			st.result.WriteText(&b)
			text(b.String(), th.base)
		}
		if st.err != nil {
			text("✗ "+st.err.Error(), th.bad)
		}
		out = append(out, nil, line{{"n", th.key}, {" back to the load form  ", th.base}, {"Esc", th.key}, {" close", th.base}})
	}
	return out
}
