package ui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/model"
)

// shortBits is a bit rate in at most 5 columns with an SI prefix and no
// unit ("1.23G", "456M", "12.3k", "0"): the table's column header and the
// graph's axis say "bit/s" once. nil (unknown) is "-".
func shortBits(bps *float64) string {
	if bps == nil {
		return "-"
	}
	return units.Short(*bps)
}

// longBits is a rate with its unit, for the header and details: "1.23 Gbit/s".
func longBits(bps *float64) string {
	if bps == nil {
		return "-"
	}
	return units.Bits(*bps)
}

// percent is a share 0..1 as "42%"; nil is "-".
func percent(share *float64) string {
	if share == nil {
		return "-"
	}
	return strconv.Itoa(int(math.Round(*share*100))) + "%"
}

// barEighths draws frac (0..1) of width columns with eighth blocks, so a
// 10-column bar resolves 1.25%.
var barEighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

func bar(frac float64, width int) string {
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

// portFlagLetters name the LACP port state bits, lowest first, as one
// column each: Activity, shorT timeout, aGgregation, Sync, Collecting,
// Distributing, deFaulted, Expired.
const portFlagLetters = "ATGSCDFE"

// portFlags writes a port state as "ATGSCD..": a letter for each set bit,
// "." for each clear one. Bits a healthy port needs (activity, aggregation,
// synchronization, collecting, distributing) are highlighted when missing,
// defaulted and expired when present; short timeout is a setting and never
// highlighted. nil (not readable) is "-".
//
// The line for each of the 256 states is made once per theme and shared:
// the slave table and the LACP panel ask for several a frame. It is
// clipped, so a caller's append copies it.
func portFlags(ps *bonding.PortState, th *theme) line {
	if ps == nil {
		return line{{"-", th.dim}}
	}
	if l := th.portFlags[*ps]; l != nil {
		return l
	}
	l := makePortFlags(*ps, th)
	th.portFlags[*ps] = l
	return l
}

func makePortFlags(ps bonding.PortState, th *theme) line {
	const needed = bonding.StateActivity | bonding.StateAggregation | bonding.StateSynchronization |
		bonding.StateCollecting | bonding.StateDistributing
	const alarming = bonding.StateDefaulted | bonding.StateExpired
	l := make(line, 0, 8)
	for i := range 8 {
		bit := bonding.PortState(1) << i
		set := ps&bit != 0
		ch, st := ".", th.dim
		if set {
			ch, st = portFlagLetters[i:i+1], th.base
		}
		switch {
		case !set && needed&bit != 0:
			ch, st = "-", th.bad
		case set && alarming&bit != 0:
			st = th.bad
		}
		l = l.add(ch, st)
	}
	return l
}

// errorCounts is the interval's errors, drops and overruns as "e/d/o"
// (rx and tx added up); "-" when the interval has no counts yet.
func errorCounts(iv *model.ErrorCounts) (string, bool) {
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

// duration is an interval as an admin types it: "100ms", "1s", "2.5s", "1m".
func duration(d time.Duration) string {
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

// speedDuplex is "10G", "1G/half", or "-" when the driver does not say.
func speedDuplex(s *bonding.Slave) string {
	if s.SpeedMbps == nil || *s.SpeedMbps <= 0 {
		return "-"
	}
	out := units.Speed(*s.SpeedMbps)
	if s.Duplex != nil && *s.Duplex != "full" {
		out += "/" + *s.Duplex
	}
	return out
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func orDash(p *string) string {
	if p == nil || *p == "" {
		return "-"
	}
	return *p
}

func intOrDash(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}

// zeroMAC is what the kernel shows for a partner it never heard from.
const zeroMAC = "00:00:00:00:00:00"
