package units

import (
	"math"
	"strconv"
)

// Short is v in at most 5 columns with an SI prefix and no unit
// ("1.23G", "456M", "12.3k", "0"), for columns and axes whose header
// names the unit once; NaN and negative values (unknown) give "-".
func Short(v float64) string {
	if math.IsNaN(v) || v < 0 {
		return "-"
	}
	i := 0
	for v >= 999.5 && i < len(siPrefixes)-1 {
		v /= 1000
		i++
	}
	prec := 2
	switch {
	case i == 0, v >= 99.95:
		prec = 0
	case v >= 9.995:
		prec = 1
	}
	// Formatted into a buffer on the stack: the only allocation is the
	// string (a frame formats a few dozen rates).
	var buf [32]byte
	return string(append(strconv.AppendFloat(buf[:0], v, 'f', prec, 64), siPrefixes[i]...))
}

// siPrefixes are Short's multipliers' letters, by power of 1000.
var siPrefixes = [...]string{"", "k", "M", "G", "T", "P"}
