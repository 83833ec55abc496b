package load

import (
	"encoding/json"
	"math"
	"strconv"
	"syscall"
)

// num is a number from a peer's JSON, read leniently: iperf3 3.12 prints
// its -1 ("none") as 18446744073709551615, some fields come as floats
// where an integer is meant, and a value of the wrong type must not fail a
// whole result. Whatever cannot be read is 0; 2^63 and above is -1.
type num float64

func (n *num) UnmarshalJSON(b []byte) error {
	s := string(b)
	switch {
	case s == "null" || s == "false":
		*n = 0
		return nil
	case s == "true":
		*n = 1
		return nil
	case len(s) >= 2 && s[0] == '"':
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		*n = 0
		return nil
	}
	switch {
	case math.IsNaN(f):
		f = 0
	case f >= 1<<63:
		// An unsigned -1 (or anything that large) means "none".
		f = -1
	case math.IsInf(f, -1):
		f = -1
	}
	*n = num(f)
	return nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// int64 returns n truncated, -1 for negative values.
func (n num) int64() int64 {
	if n < 0 {
		return -1
	}
	if n >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}

// present is a JSON key whose mere presence means "on", as iperf3 reads
// "reverse", "nodelay" and the like.
type present bool

func (p *present) UnmarshalJSON([]byte) error {
	*p = true
	return nil
}

var _ json.Unmarshaler = (*num)(nil)

func errnoString(e int32) string {
	return syscall.Errno(e).Error()
}
