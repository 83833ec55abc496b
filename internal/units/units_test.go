package units

import (
	"math"
	"testing"
)

func TestBits(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0 bit/s"},
		{999, "999 bit/s"},
		{1000, "1.00 kbit/s"},
		{12345, "12.3 kbit/s"},
		{940e6, "940 Mbit/s"},
		{1e9, "1.00 Gbit/s"},
		{25.5e9, "25.5 Gbit/s"},
		{math.NaN(), "-"},
		{-1, "-"},
	} {
		if got := Bits(c.in); got != c.want {
			t.Errorf("Bits(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSpeed(t *testing.T) {
	for in, want := range map[int]string{100: "100M", 1000: "1G", 2500: "2.5G", 10000: "10G", 200000: "200G"} {
		if got := Speed(in); got != want {
			t.Errorf("Speed(%d) = %q, want %q", in, got, want)
		}
	}
}
