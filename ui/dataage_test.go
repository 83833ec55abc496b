package ui

import (
	"strings"
	"testing"

	"github.com/bondtop/bondtop/model"
)

// TestDataAge: the header says how old a relayed bond's data is, and
// calls it stale past a minute; a bond read here says nothing.
func TestDataAge(t *testing.T) {
	th := newTheme(true)
	text := func(l line) string {
		var b strings.Builder
		for _, s := range l {
			b.WriteString(s.text)
		}
		return b.String()
	}
	age := func(sec float64) *model.BondSample {
		return &model.BondSample{DataAgeSeconds: &sec}
	}
	if got := text(dataAge(&model.BondSample{}, th)); got != "" {
		t.Errorf("a local bond: %q, want nothing", got)
	}
	if got := text(dataAge(age(4.4), th)); got != "data 4s old" {
		t.Errorf("4.4 s: %q", got)
	}
	l := dataAge(age(95), th)
	if got := text(l); got != "STALE: data 1m35s old" || l[0].style != th.bad {
		t.Errorf("95 s: %q, want it stale and marked bad", got)
	}
}
