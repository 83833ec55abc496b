package metrics

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/bondtop/bondtop/internal/promtext"
)

// This file owns the process_* metrics every exporter on Linux serves,
// with the names, types and meaning the Prometheus Go client gave them:
// read from /proc/self at scrape time, as it read them. A file that cannot
// be read leaves out the metrics it gives, not the scrape. (The client's
// process_network_*_bytes_total are not among them: they were the
// network namespace's counters, not the process's.)

var (
	descProcessCPU = promtext.NewDesc("process_cpu_seconds_total",
		"User and system CPU time the process has used, in seconds.", promtext.Counter)
	descProcessOpenFDs = promtext.NewDesc("process_open_fds",
		"File descriptors the process has open.", promtext.Gauge)
	descProcessMaxFDs = promtext.NewDesc("process_max_fds",
		"The most file descriptors the process may open (its soft RLIMIT_NOFILE).", promtext.Gauge)
	descProcessVirtual = promtext.NewDesc("process_virtual_memory_bytes",
		"Virtual memory size of the process, in bytes.", promtext.Gauge)
	descProcessVirtualMax = promtext.NewDesc("process_virtual_memory_max_bytes",
		"The most virtual memory the process may map (its soft RLIMIT_AS), in bytes; 2^64-1 when unlimited.", promtext.Gauge)
	descProcessResident = promtext.NewDesc("process_resident_memory_bytes",
		"Resident memory size of the process, in bytes.", promtext.Gauge)
	descProcessStart = promtext.NewDesc("process_start_time_seconds",
		"Start time of the process, in seconds since the Unix epoch.", promtext.Gauge)
)

// userHZ is the unit of the times in /proc (clock ticks per second).
// The kernel reports them in USER_HZ, which is 100 on every architecture
// Go runs Linux on (only alpha's differs); it tells each process so in
// its aux vector (AT_CLKTCK, what sysconf(_SC_CLK_TCK) returns), which
// TestClockTick checks.
const userHZ = 100

// procStat is what the process metrics need of /proc/self/stat.
type procStat struct {
	utime, stime uint64 // clock ticks
	starttime    uint64 // clock ticks after boot
	vsize        uint64 // bytes
	rss          uint64 // pages
}

// parseProcStat reads a /proc/PID/stat line: "pid (comm) state ppid ..."
// (proc(5)). The command name may hold spaces and parentheses, so the
// fields are counted from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("stat: no command name")
	}
	// f[0] is field 3 of proc(5), the state: field n is f[n-3].
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return procStat{}, errors.New("stat: too few fields")
	}
	var st procStat
	for _, x := range []struct {
		field int
		to    *uint64
	}{{14, &st.utime}, {15, &st.stime}, {22, &st.starttime}, {23, &st.vsize}, {24, &st.rss}} {
		v, err := strconv.ParseUint(f[x.field-3], 10, 64)
		if err != nil {
			return procStat{}, err
		}
		*x.to = v
	}
	return st, nil
}

// parseBootTime returns the btime line of /proc/stat: the Unix time the
// system booted at, in seconds. The file is read whole: its intr line
// alone can be longer than a line reader's limit on a large host.
func parseBootTime(b []byte) (uint64, error) {
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			return strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, errors.New("/proc/stat: no btime")
}

// parseLimit returns the soft limit of the /proc/PID/limits line that
// starts with name ("Max open files"); unlimited is 2^64-1, as
// RLIM_INFINITY is.
func parseLimit(b []byte, name string) (float64, bool) {
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, name+" ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		if f[0] == "unlimited" {
			return math.MaxUint64, true
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		return float64(v), err == nil
	}
	return 0, false
}

// procSuperMagic is procfs's f_type in statfs(2).
const procSuperMagic = 0x9fa0

// openFDs counts the open file descriptors listed in dir (/proc/self/fd).
// Linux 6.2 and later give the count as the size of the directory,
// without a listing; earlier ones give 0 and the directory is listed (the
// count then includes the descriptor that lists it, as the Go client's
// did). The size means that on procfs only, not in a copy of it.
func openFDs(dir string) (int, error) {
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) == nil && fs.Type == procSuperMagic {
		if st, err := os.Stat(dir); err == nil && st.Size() > 0 {
			return int(st.Size()), nil
		}
	}
	d, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	return len(names), err
}

// collectProcess adds the process_* metrics.
func collectProcess(out *promtext.Scrape) {
	collectProcessFrom(out, "/proc")
}

// collectProcessFrom adds the process_* metrics read from proc, the
// mount point of procfs (a tree in the tests).
func collectProcessFrom(out *promtext.Scrape, proc string) {
	if b, err := os.ReadFile(proc + "/self/stat"); err == nil {
		if st, err := parseProcStat(b); err == nil {
			out.Add(descProcessCPU, float64(st.utime+st.stime)/userHZ)
			out.Add(descProcessVirtual, float64(st.vsize))
			out.Add(descProcessResident, float64(st.rss)*float64(os.Getpagesize()))
			if b, err := os.ReadFile(proc + "/stat"); err == nil {
				if boot, err := parseBootTime(b); err == nil {
					out.Add(descProcessStart, float64(boot)+float64(st.starttime)/userHZ)
				}
			}
		}
	}
	if n, err := openFDs(proc + "/self/fd"); err == nil {
		out.Add(descProcessOpenFDs, float64(n))
	}
	if b, err := os.ReadFile(proc + "/self/limits"); err == nil {
		if v, ok := parseLimit(b, "Max open files"); ok {
			out.Add(descProcessMaxFDs, v)
		}
		if v, ok := parseLimit(b, "Max address space"); ok {
			out.Add(descProcessVirtualMax, v)
		}
	}
}
