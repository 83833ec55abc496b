package ui

import (
	"os"

	"github.com/gdamore/tcell/v2"
)

// theme is every style the dashboard draws with. The mono theme (NO_COLOR)
// says the same things with attributes only: a missing LACP bit is reverse
// video rather than red, so nothing the colours carry is lost.
type theme struct {
	mono bool

	// portFlags holds the drawn line of each LACP port state, made when
	// first asked for (see portFlags).
	portFlags [256]line

	base    tcell.Style // ordinary text
	dim     tcell.Style // labels, units, absent values
	strong  tcell.Style // values the eye should find first
	heading tcell.Style // table column names
	good    tcell.Style // up, healthy
	warn    tcell.Style // worth a look: backup slave, short of perfect
	bad     tcell.Style // broken: link down, missing LACP bits, errors
	key     tcell.Style // key names in the footer and help
	paused  tcell.Style
	// selected marks the table's current row while the table has focus;
	// selectedBlur while focus is elsewhere (the row stays findable).
	selected     tcell.Style
	selectedBlur tcell.Style

	border      tcell.Color
	borderFocus tcell.Color

	// bond is the aggregate line of the graphs; slaves cycles per slave,
	// indexed by enslave order so a slave keeps its colour when re-sorted.
	bond   tcell.Style
	slaves []tcell.Style
}

// noColorRequested follows https://no-color.org: any non-empty NO_COLOR.
func noColorRequested() bool { return os.Getenv("NO_COLOR") != "" }

func newTheme(mono bool) *theme {
	d := tcell.StyleDefault
	if mono {
		return &theme{
			mono:         true,
			base:         d,
			dim:          d.Dim(true),
			strong:       d.Bold(true),
			heading:      d.Bold(true),
			good:         d,
			warn:         d.Bold(true),
			bad:          d.Reverse(true),
			key:          d.Reverse(true),
			paused:       d.Reverse(true).Bold(true),
			selected:     d.Reverse(true),
			selectedBlur: d.Underline(true),
			border:       tcell.ColorDefault,
			borderFocus:  tcell.ColorDefault,
			bond:         d.Bold(true),
			slaves:       []tcell.Style{d},
		}
	}
	slaves := []tcell.Color{
		tcell.ColorLime, tcell.ColorAqua, tcell.ColorFuchsia, tcell.ColorYellow,
		tcell.ColorOrange, tcell.ColorDodgerBlue, tcell.ColorSalmon, tcell.ColorSilver,
	}
	t := &theme{
		base:         d,
		dim:          d.Foreground(tcell.ColorGray),
		strong:       d.Foreground(tcell.ColorWhite).Bold(true),
		heading:      d.Foreground(tcell.ColorTeal).Bold(true),
		good:         d.Foreground(tcell.ColorGreen),
		warn:         d.Foreground(tcell.ColorYellow),
		bad:          d.Foreground(tcell.ColorWhite).Background(tcell.ColorMaroon).Bold(true),
		key:          d.Foreground(tcell.ColorBlack).Background(tcell.ColorTeal),
		paused:       d.Foreground(tcell.ColorBlack).Background(tcell.ColorYellow).Bold(true),
		selected:     d.Foreground(tcell.ColorBlack).Background(tcell.ColorTeal),
		selectedBlur: d.Underline(true),
		border:       tcell.ColorGray,
		borderFocus:  tcell.ColorTeal,
		bond:         d.Foreground(tcell.ColorWhite).Bold(true),
	}
	for _, c := range slaves {
		t.slaves = append(t.slaves, d.Foreground(c))
	}
	return t
}

// slave is the style of the slave at enslave position i.
func (t *theme) slave(i int) tcell.Style {
	if i < 0 {
		return t.base
	}
	return t.slaves[i%len(t.slaves)]
}
