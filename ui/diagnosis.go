package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/format"
	"github.com/gdamore/tcell/v2"
)

// The diagnosis panel (key d): the analyzer's findings for the selected
// bond, worst first, the selected one's "why and what to do", and the
// what-if table (the current flows under every policy and slave count).
// ↑ ↓ pick a finding; PgUp PgDn Home End scroll.

// diagState is the panel's own state: which finding is selected. It is an
// index rather than an ID so it survives findings changing text between
// snapshots; it is clamped at each draw.
type diagState struct {
	cursor int
}

// severityStyle is a finding's colour; the tag says it again in words,
// for NO_COLOR terminals and colour-blind eyes.
func (d *dashboard) severityStyle(s model.Severity) (string, *tcell.Style) {
	switch s {
	case model.SeverityCritical:
		return "CRIT", d.th.bad
	case model.SeverityWarning:
		return "WARN", d.th.warn
	}
	return "info", d.th.dim
}

// diagnosisKey moves the selection; other keys scroll the overlay.
func (d *dashboard) diagnosisKey(ev *tcell.EventKey) bool {
	b := d.model.Selected()
	n := 0
	if b != nil {
		n = len(b.Findings)
	}
	switch {
	case ev.Key() == tcell.KeyUp || ev.Key() == tcell.KeyRune && ev.Rune() == 'k':
		d.diag.cursor = max(min(d.diag.cursor, n-1)-1, 0)
	case ev.Key() == tcell.KeyDown || ev.Key() == tcell.KeyRune && ev.Rune() == 'j':
		d.diag.cursor = max(min(d.diag.cursor+1, n-1), 0)
	default:
		return false
	}
	// Keep the selected finding on screen: its line is cursor+2.
	d.overlay.offset = min(d.overlay.offset, d.diag.cursor+2)
	if d.overlay.shown > 0 && d.diag.cursor+2 >= d.overlay.offset+d.overlay.shown {
		d.overlay.offset = d.diag.cursor + 3 - d.overlay.shown
	}
	return true
}

func (d *dashboard) renderDiagnosis(width, _ int) []line {
	th := d.th
	b := d.model.Selected()
	if b == nil {
		return []line{{{"no bond selected", th.dim}}}
	}
	var out []line
	head := fmt.Sprintf("%s: %d findings, worst first", b.Name, len(b.Findings))
	switch len(b.Findings) {
	case 0:
		head = b.Name + ": nothing found"
	case 1:
		head = b.Name + ": 1 finding"
	}
	out = append(out, line{{head, th.strong}, {"  ↑↓ select  PgUp/PgDn scroll  Esc close", th.dim}}, nil)
	if b.Findings == nil {
		out = append(out, line{{"No analysis for this bond (the analyzer did not run on these snapshots).", th.dim}})
	}
	cur := min(d.diag.cursor, len(b.Findings)-1)
	for i, f := range b.Findings {
		tag, st := d.severityStyle(f.Severity)
		msg := truncate(f.Message, width-7)
		row := line{{tag, st}, {"  ", th.base}}
		if i == cur {
			row = append(row, span{padRight(msg, width-6), th.selected})
		} else {
			row = append(row, span{msg, th.base})
		}
		out = append(out, row)
	}
	if cur >= 0 {
		f := b.Findings[cur]
		out = append(out, nil, line{{"why, and what to do", th.heading}, {"  (" + f.ID + slavesNote(f.Slaves) + ")", th.dim}})
		for _, text := range wrap(f.Detail, width, "") {
			out = append(out, line{{text, th.base}})
		}
	}
	out = append(out, nil)
	if m := b.Measured; m.Metered() {
		text, ok := agreementText(m)
		st := th.good
		if !ok {
			st = th.warn
		}
		out = append(out, line{{text, st}, {"  (" + meterSource(m) + "; f lists the flows)", th.dim}}, nil)
	}
	out = append(out, d.driftLines(b, width)...)
	out = append(out, d.whatIfLines(b, width)...)
	return out
}

func slavesNote(slaves []string) string {
	if len(slaves) == 0 {
		return ""
	}
	return ": " + strings.Join(slaves, ", ")
}

// whatIfLines is the what-if table: one row per policy, then one per
// slave count under the current policy, each with its split.
func (d *dashboard) whatIfLines(b *model.BondSample, width int) []line {
	th := d.th
	wt := diagnose.WhatIf(b)
	if wt == nil {
		why := "no flows of this host cross the bond yet"
		switch {
		case b.Flows == nil:
			why = "no flow table (sockets are read on the live host and in --demo; not from --root or --replay)"
		case !usesHashPolicy(format.Deref(b.Mode)) || b.XmitHashPolicy == nil:
			why = "mode " + format.OrDash(b.Mode) + " does not place flows by a hash policy"
		case len(b.Flows.Flows) > 0:
			why = "the hash cannot place these flows (" + orText(b.Flows.Reason, "mode or policy unknown") + ")"
		}
		return []line{{{"what-if: ", th.heading}, {why, th.dim}}}
	}
	usable := ""
	if len(wt.Policies) > 0 {
		usable = strings.Join(wt.Policies[0].Slaves, "/")
	}
	out := []line{
		{{"what-if", th.heading}, {fmt.Sprintf("  %d flows weighted by %s, shares over %s", wt.Flows, wt.Weighting, usable), th.dim}},
		{{padRight("  policy", 14) + padRight("split", 24) + "largest", th.dim}},
	}
	row := func(label string, s *diagnose.Scenario) line {
		mark, st := "  ", th.base
		if s.Current {
			mark, st = "* ", th.strong
		}
		split := s.Split()
		largest := "-"
		if split != "unpredictable" {
			largest = strconv.Itoa(int(s.Largest*100+0.5)) + "%"
		}
		l := line{{mark + padRight(label, 12), st}, {padRight(split, 24), st}, {padRight(largest, 8), st}}
		switch {
		case s.Current:
			l = l.add("now", th.strong)
		case s.Unpredictable >= 0.999 && s.Reason != "":
			l = l.add(truncate(s.Reason, max(width-l.width(), 0)), th.dim)
		case s.Unpredictable > 0:
			l = l.add(format.Percent(&s.Unpredictable)+" unplaced", th.dim)
		}
		return l
	}
	for i := range wt.Policies {
		out = append(out, row(wt.Policies[i].Policy.String(), &wt.Policies[i]))
	}
	if len(wt.Counts) > 0 {
		out = append(out, nil, line{{padRight("  slaves", 14) + "split under " + wt.Current.String(), th.dim}})
		for i := range wt.Counts {
			s := wt.Counts[i]
			s.Current = false
			out = append(out, row(strconv.Itoa(len(s.Slaves))+" slaves", &s))
		}
	}
	return out
}
