package ui

import (
	"time"

	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/ui/format"
)

// loadBadge is the header's word on a load test running while its panel
// is hidden (l shows it): how long it has run and its rates.
func (d *dashboard) loadBadge() line {
	p, th := d.loadp, d.th
	text := " LOAD starting "
	if !p.starting {
		text = " LOAD " + format.Duration(p.elapsed.Round(time.Second))
		if p.sent.Bytes > 0 {
			text += " tx " + units.Bits(p.sent.BitsPerSecond)
		}
		if p.received.Bytes > 0 {
			text += " rx " + units.Bits(p.received.BitsPerSecond)
		}
		text += " (l shows) "
	}
	return line{{text, th.warn}}
}
