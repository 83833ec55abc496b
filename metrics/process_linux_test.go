package metrics

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/bondtop/bondtop/internal/promtext"
)

// testStart is a moment after this process started, and close to it.
var testStart = time.Now()

// TestClockTick: the kernel's clock tick, the unit of /proc's times, is
// userHZ. It tells every process in the aux vector (AT_CLKTCK, which
// sysconf(_SC_CLK_TCK) and `getconf CLK_TCK` return).
func TestClockTick(t *testing.T) {
	const atNull, atClkTck = 0, 17 // <linux/auxvec.h>
	auxv, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		t.Fatal(err)
	}
	word := int(unsafe.Sizeof(uintptr(0)))
	read := func(b []byte) uint64 {
		if word == 8 {
			return binary.NativeEndian.Uint64(b)
		}
		return uint64(binary.NativeEndian.Uint32(b))
	}
	for i := 0; i+2*word <= len(auxv); i += 2 * word {
		switch read(auxv[i:]) {
		case atClkTck:
			if hz := read(auxv[i+word:]); hz != userHZ {
				t.Fatalf("AT_CLKTCK %d, userHZ %d", hz, userHZ)
			}
			return
		case atNull:
			t.Fatal("no AT_CLKTCK in the aux vector")
		}
	}
	t.Fatal("the aux vector has no end")
}

// The process_* metrics against what the kernel tells by other ways.
func TestProcessMetrics(t *testing.T) {
	// Use some CPU first: a unit wrong by a factor then shows.
	cpuTime := func() float64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	for cpuTime() < 0.3 {
	}
	cpu0 := cpuTime()
	fams := collectFamilies(t, collectProcess)
	cpu1 := cpuTime()
	// Between the two, but for the tick's rounding.
	if got := value(t, fams, "process_cpu_seconds_total"); got < cpu0-0.02 || got > cpu1+0.02 {
		t.Errorf("process_cpu_seconds_total %v, getrusage %v before and %v after", got, cpu0, cpu1)
	}

	start := value(t, fams, "process_start_time_seconds")
	if t0 := float64(testStart.UnixNano()) / 1e9; start > t0+0.02 || start < t0-5 {
		t.Errorf("process_start_time_seconds %v; the test's package started at %v", start, t0)
	}

	for name, resource := range map[string]int{"process_max_fds": syscall.RLIMIT_NOFILE, "process_virtual_memory_max_bytes": syscall.RLIMIT_AS} {
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(resource, &rl); err != nil {
			t.Fatal(err)
		}
		if got := value(t, fams, name); got != float64(rl.Cur) {
			t.Errorf("%s %v, getrlimit %d", name, got, rl.Cur)
		}
	}

	statm, err := os.ReadFile("/proc/self/statm") // size and resident, in pages
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(statm))
	for i, name := range []string{"process_virtual_memory_bytes", "process_resident_memory_bytes"} {
		pages, _ := strconv.ParseFloat(f[i], 64)
		want := pages * float64(os.Getpagesize())
		if got := value(t, fams, name); want == 0 || math.Abs(got-want) > 0.1*want {
			t.Errorf("%s %v, statm %v", name, got, want)
		}
	}

	// Ten more descriptors are ten more.
	before := value(t, fams, "process_open_fds")
	listed, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	want := len(listed) // with the one that lists them, as openFDs lists them before Linux 6.2
	if st, err := os.Stat("/proc/self/fd"); err == nil && st.Size() > 0 {
		want-- // Linux 6.2 and later: counted without a listing
	}
	if before != float64(want) {
		t.Errorf("process_open_fds %v, want %d", before, want)
	}
	for range 10 {
		f, err := os.Open("/dev/null")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
	}
	if got := value(t, collectFamilies(t, collectProcess), "process_open_fds"); got != before+10 {
		t.Errorf("process_open_fds %v after opening 10, was %v", got, before)
	}
}

// A file of /proc that cannot be read, or read as expected, leaves out
// the metrics it gives, and only those.
func TestProcessMetricsPartial(t *testing.T) {
	stat := "4242 (bond top) (x) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0 20 0 9 0 12345 1000000 300 18446744073709551615\n"
	limits := "Limit                     Soft Limit           Hard Limit           Units     \n" +
		"Max cpu time              unlimited            unlimited            seconds   \n" +
		"Max open files            1024                 4096                 files     \n" +
		"Max address space         unlimited            unlimited            bytes     \n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  map[string]float64
	}{
		{"stat and boot time only", map[string]string{"self/stat": stat, "stat": "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n"}, map[string]float64{
			"process_cpu_seconds_total":     4,
			"process_virtual_memory_bytes":  1000000,
			"process_resident_memory_bytes": 300 * float64(os.Getpagesize()),
			"process_start_time_seconds":    1700000000 + 123.45,
		}},
		{"no boot time", map[string]string{"self/stat": stat}, map[string]float64{
			"process_cpu_seconds_total":     4,
			"process_virtual_memory_bytes":  1000000,
			"process_resident_memory_bytes": 300 * float64(os.Getpagesize()),
		}},
		{"limits and descriptors", map[string]string{"self/limits": limits, "self/fd/0": "", "self/fd/1": "", "self/fd/7": ""}, map[string]float64{
			"process_max_fds":                  1024,
			"process_virtual_memory_max_bytes": math.MaxUint64,
			"process_open_fds":                 3,
		}},
		{"garbled", map[string]string{"self/stat": "4242 (bondtop) S 1 2\n", "self/limits": "Max open files\n", "stat": "btime x\n"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range c.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fams := collectFamilies(t, func(s *promtext.Scrape) { collectProcessFrom(s, root) })
			for name := range fams {
				if _, ok := c.want[name]; !ok {
					t.Errorf("%s served", name)
				}
			}
			for name, want := range c.want {
				if got := value(t, fams, name); math.Abs(got-want) > 1e-6*want {
					t.Errorf("%s %v, want %v", name, got, want)
				}
			}
		})
	}
}
