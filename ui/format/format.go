// Package format says how bondtop's screen writes values: bit rates in
// five columns or with their unit, shares, bars, intervals, error counts,
// link speeds, and "-" for what no source gave. It draws nothing; the
// dashboard (package ui) and its widgets use it. See docs/dashboard.md.
package format

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/model"
)

// Short is a bit rate in at most 5 columns with an SI prefix and no
// unit ("1.23G", "456M", "12.3k", "0"): the table's column header and the
// graph's axis say "bit/s" once. nil (unknown) is "-".
func Short(bps *float64) string {
	if bps == nil {
		return "-"
	}
	return units.Short(*bps)
}

// Long is a rate with its unit, for the header and details: "1.23 Gbit/s".
func Long(bps *float64) string {
	if bps == nil {
		return "-"
	}
	return units.Bits(*bps)
}

// Packets is a packet rate with its unit ("12.3k p/s"); nil is "- p/s".
func Packets(pps *float64) string {
	if pps == nil {
		return "- p/s"
	}
	return units.Packets(*pps)
}

// Percent is a share 0..1 as "42%"; nil is "-".
func Percent(share *float64) string {
	if share == nil {
		return "-"
	}
	return strconv.Itoa(int(math.Round(*share*100))) + "%"
}

// barEighths are the blocks of one to seven eighths of a column.
var barEighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// Bar draws frac (0..1) of width columns with eighth blocks, so a
// 10-column bar resolves 1.25%.
func Bar(frac float64, width int) string {
	if width <= 0 {
		return ""
	}
	if math.IsNaN(frac) || frac < 0 {
		frac = 0
	}
	frac = min(frac, 1)
	eighths := int(math.Round(frac * float64(width*8)))
	var b strings.Builder
	full := eighths / 8
	b.WriteString(strings.Repeat("█", full))
	cells := full
	if rem := eighths % 8; rem > 0 {
		b.WriteString(barEighths[rem])
		cells++
	}
	b.WriteString(strings.Repeat(" ", width-cells))
	return b.String()
}

// Errors is the interval's errors, drops and overruns as "e/d/o"
// (rx and tx added up); "-" when the interval has no counts yet.
func Errors(iv *model.ErrorCounts) (string, bool) {
	if iv == nil {
		return "-", false
	}
	sum := func(ps ...*uint64) (uint64, bool) {
		var n uint64
		known := false
		for _, p := range ps {
			if p != nil {
				n += *p
				known = true
			}
		}
		return n, known
	}
	part := func(n uint64, known bool) string {
		if !known {
			return "-"
		}
		return strconv.FormatUint(n, 10)
	}
	e, ek := sum(iv.RxErrors, iv.TxErrors)
	d, dk := sum(iv.RxDropped, iv.TxDropped)
	o, ok := sum(iv.RxOverErrors, iv.RxFifoErrors)
	return part(e, ek) + "/" + part(d, dk) + "/" + part(o, ok), iv.Any()
}

// Duration is an interval as an admin types it: "100ms", "1s", "2.5s", "1m".
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
	case d < time.Hour:
		return strconv.FormatFloat(d.Minutes(), 'f', -1, 64) + "m"
	default:
		return strconv.FormatFloat(d.Hours(), 'f', -1, 64) + "h"
	}
}

// SpeedDuplex is "10G", "1G/half", or "-" when the driver does not say.
func SpeedDuplex(s *bonding.Slave) string {
	if s.SpeedMbps == nil || *s.SpeedMbps <= 0 {
		return "-"
	}
	out := units.Speed(*s.SpeedMbps)
	if s.Duplex != nil && *s.Duplex != "full" {
		out += "/" + *s.Duplex
	}
	return out
}

// Deref is *p, "" when p is nil.
func Deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// OrDash is *p, "-" when p is nil or empty.
func OrDash(p *string) string {
	if p == nil || *p == "" {
		return "-"
	}
	return *p
}

// Uint is *p in decimal, "-" when p is nil.
func Uint(p *uint64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatUint(*p, 10)
}

// Int is *p in decimal, "-" when p is nil.
func Int(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}
