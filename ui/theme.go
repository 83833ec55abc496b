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

	base    *tcell.Style // ordinary text
	dim     *tcell.Style // labels, units, absent values
	strong  *tcell.Style // values the eye should find first
	heading *tcell.Style // table column names
	good    *tcell.Style // up, healthy
	warn    *tcell.Style // worth a look: backup slave, short of perfect
	bad     *tcell.Style // broken: link down, missing LACP bits, errors
	key     *tcell.Style // key names in the footer and help
	paused  *tcell.Style
	// selected marks the table's current row while the table has focus;
	// selectedBlur while focus is elsewhere (the row stays findable).
	selected     *tcell.Style
	selectedBlur *tcell.Style

	border      tcell.Color
	borderFocus tcell.Color

	// bond is the aggregate line of the graphs; slaves cycles per slave,
	// indexed by enslave order so a slave keeps its colour when re-sorted.
	bond   *tcell.Style
	slaves []tcell.Style
}

// noColorRequested follows https://no-color.org: any non-empty NO_COLOR.
func noColorRequested() bool { return os.Getenv("NO_COLOR") != "" }

func newTheme(mono bool) *theme {
	d := tcell.StyleDefault
	if mono {
		return &theme{
			mono:         true,
			base:         styleOf(d),
			dim:          styleOf(d.Dim(true)),
			strong:       styleOf(d.Bold(true)),
			heading:      styleOf(d.Bold(true)),
			good:         styleOf(d),
			warn:         styleOf(d.Bold(true)),
			bad:          styleOf(d.Reverse(true)),
			key:          styleOf(d.Reverse(true)),
			paused:       styleOf(d.Reverse(true).Bold(true)),
			selected:     styleOf(d.Reverse(true)),
			selectedBlur: styleOf(d.Underline(true)),
			border:       tcell.ColorDefault,
			borderFocus:  tcell.ColorDefault,
			bond:         styleOf(d.Bold(true)),
			slaves:       []tcell.Style{d},
		}
	}
	slaves := []tcell.Color{
		tcell.ColorLime, tcell.ColorAqua, tcell.ColorFuchsia, tcell.ColorYellow,
		tcell.ColorOrange, tcell.ColorDodgerBlue, tcell.ColorSalmon, tcell.ColorSilver,
	}
	t := &theme{
		base:         styleOf(d),
		dim:          styleOf(d.Foreground(tcell.ColorGray)),
		strong:       styleOf(d.Foreground(tcell.ColorWhite).Bold(true)),
		heading:      styleOf(d.Foreground(tcell.ColorTeal).Bold(true)),
		good:         styleOf(d.Foreground(tcell.ColorGreen)),
		warn:         styleOf(d.Foreground(tcell.ColorYellow)),
		bad:          styleOf(d.Foreground(tcell.ColorWhite).Background(tcell.ColorMaroon).Bold(true)),
		key:          styleOf(d.Foreground(tcell.ColorBlack).Background(tcell.ColorTeal)),
		paused:       styleOf(d.Foreground(tcell.ColorBlack).Background(tcell.ColorYellow).Bold(true)),
		selected:     styleOf(d.Foreground(tcell.ColorBlack).Background(tcell.ColorTeal)),
		selectedBlur: styleOf(d.Underline(true)),
		border:       tcell.ColorGray,
		borderFocus:  tcell.ColorTeal,
		bond:         styleOf(d.Foreground(tcell.ColorWhite).Bold(true)),
	}
	for _, c := range slaves {
		t.slaves = append(t.slaves, d.Foreground(c))
	}
	return t
}

// slave is the style of the slave at enslave position i.
func (t *theme) slave(i int) *tcell.Style {
	if i < 0 {
		return t.base
	}
	return &t.slaves[i%len(t.slaves)]
}

// plainStyle is tcell's default, for spans that are not the theme's.
var plainStyle = tcell.StyleDefault

// styleOf is a style of the theme's own: a span holds a pointer to one
// (8 bytes) instead of a copy (a tcell.Style is 72), so a frame's lines
// take a third of the memory they did.
func styleOf(s tcell.Style) *tcell.Style { return &s }

// styleValue is the style p points at; a span without one is drawn in
// tcell's default rather than stopping the dashboard.
func styleValue(p *tcell.Style) tcell.Style {
	if p == nil {
		return tcell.StyleDefault
	}
	return *p
}
