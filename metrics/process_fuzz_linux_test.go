package metrics

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzProcFiles holds the parsers of /proc/self/stat, /proc/stat and
// /proc/self/limits to what the kernel may write: a command name with
// spaces and parentheses, any counter values, and garbage. A stat line
// made of the fuzzed values reads back as those values; any bytes at all
// give an error or a value, never a panic.
func FuzzProcFiles(f *testing.F) {
	f.Add("bondtop", uint64(12), uint64(3), uint64(4567), uint64(1<<30), uint64(2500), []byte("btime 1764900000\n"))
	f.Add("a) (b", uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), []byte("Max open files            1024                 524288               files\n"))
	f.Add(") ) )", ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), []byte("Max address space         unlimited            unlimited            bytes\n"))
	f.Fuzz(func(t *testing.T, comm string, utime, stime, start, vsize, rss uint64, raw []byte) {
		// Whatever the bytes, no panic.
		_, _ = parseProcStat(raw)
		_, _ = parseBootTime(raw)
		_, _ = parseLimit(raw, "Max open files")

		if strings.ContainsAny(comm, "\n") {
			return // the kernel's stat is one line
		}
		// Fields 3 to 24 of proc(5), the rest as the kernel writes them.
		line := fmt.Sprintf("4242 (%s) S 1 4242 4242 0 -1 4194560 100 0 0 0 %d %d 0 0 20 0 3 0 %d %d %d 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
			comm, utime, stime, start, vsize, rss)
		st, err := parseProcStat([]byte(line))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if want := (procStat{utime: utime, stime: stime, starttime: start, vsize: vsize, rss: rss}); st != want {
			t.Fatalf("%q: read %+v, want %+v", line, st, want)
		}
	})
}
