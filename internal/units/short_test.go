package units

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestShort holds Short to the printf formatting it is written
// without (one allocation a rate, not three): the same text for every
// magnitude and at each precision's rounding edge.
func TestShort(t *testing.T) {
	printf := func(v float64) string {
		if math.IsNaN(v) || v < 0 {
			return "-"
		}
		prefixes := []string{"", "k", "M", "G", "T", "P"}
		i := 0
		for v >= 999.5 && i < len(prefixes)-1 {
			v /= 1000
			i++
		}
		switch {
		case i == 0:
			return fmt.Sprintf("%.0f", v)
		case v >= 99.95:
			return fmt.Sprintf("%.0f%s", v, prefixes[i])
		case v >= 9.995:
			return fmt.Sprintf("%.1f%s", v, prefixes[i])
		default:
			return fmt.Sprintf("%.2f%s", v, prefixes[i])
		}
	}
	values := []float64{math.NaN(), -1, 0, 0.4, 0.5, 1, 999.4, 999.5, 1000, 1234, 9994.9, 9995, 99949, 99950,
		999_499, 999_500, 1e9, 9.995e9, 1e15, 1e18, 1e21, math.Inf(1)}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		values = append(values, math.Pow(10, rng.Float64()*19))
	}
	for _, v := range values {
		if got, want := Short(v), printf(v); got != want {
			t.Fatalf("Short(%v) = %q, printf gives %q", v, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Short(1.234e9) }); n > 1 {
		t.Errorf("Short allocates %v times, want 1", n)
	}
}
