package ui

import (
	"fmt"
	"strings"

	"github.com/bondtop/bondtop/model"
)

// driftLines is the diagnosis panel's configuration section: which
// system configures the bond, and each setting whose running value is
// not the configured one, with the file and line to look at. Nothing
// where the configuration was not read (the demo, a tree without etc/).
func (d *dashboard) driftLines(b *model.BondSample, width int) []line {
	th := d.th
	switch {
	case b.Drift == nil:
		return nil
	case b.Intended == nil:
		return []line{{{"configuration: ", th.heading}, {"none defines " + b.Name + " (it will not survive a reboot)", th.warn}}, nil}
	}
	in := b.Intended
	head := line{{"configuration", th.heading}, {"  " + in.Source + ": " + truncate(strings.Join(in.Files, " "), max(width-len(in.Source)-17, 8)), th.dim}}
	if len(b.Drift) == 0 {
		return []line{head, {{"  the running bond matches it", th.base}}, nil}
	}
	out := []line{head, {{"  " + padRight("setting", 18) + padRight("running", 18) + padRight("configured", 18) + "where", th.dim}}}
	for _, dr := range b.Drift {
		where := dr.File
		if dr.Line > 0 {
			where = fmt.Sprintf("%s:%d", dr.File, dr.Line)
		}
		l := line{{"  " + padRight(dr.Option, 18), th.base}, {padRight(orText(dr.Running, "none"), 18), th.warn}, {padRight(orText(dr.Intended, "none"), 18), th.base}}
		out = append(out, l.add(truncate(where, max(width-l.width(), 8)), th.dim))
	}
	return append(out, nil)
}
