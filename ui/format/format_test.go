package format

import (
	"testing"
	"time"

	"github.com/bondtop/bondtop/model"
)

func TestFormat(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	u := func(v uint64) *uint64 { return &v }
	for _, c := range []struct{ got, want string }{
		{Short(nil), "-"},
		{Short(f(1.234e9)), "1.23G"},
		{Long(f(1.234e9)), "1.23 Gbit/s"},
		{Percent(f(0.416)), "42%"},
		{Percent(nil), "-"},
		{Bar(0.5, 4), "██  "},
		{Bar(1.0/16, 2), "▏ "},
		{Bar(-1, 3), "   "},
		{Bar(2, 2), "██"},
		{Duration(100 * time.Millisecond), "100ms"},
		{Duration(2500 * time.Millisecond), "2.5s"},
		{Duration(5 * time.Minute), "5m"},
		{OrDash(nil), "-"},
		{Packets(nil), "- p/s"},
		{Uint(nil), "-"},
		{Uint(u(7)), "7"},
		{Int(nil), "-"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if s, any := Errors(&model.ErrorCounts{RxErrors: u(1), TxErrors: u(2), RxDropped: u(0)}); s != "3/0/-" || !any {
		t.Errorf("errors: %q %v, want 3/0/- and some", s, any)
	}
	if s, any := Errors(nil); s != "-" || any {
		t.Errorf("no interval: %q %v", s, any)
	}
}
