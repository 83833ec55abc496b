package guest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel's own view, read here with the plainest code possible and
// independently of bondtop's parsers, so a test compares bondtop against
// the kernel rather than against itself.

// Sysfs returns /sys/class/net/<iface>/<file>, trimmed.
func Sysfs(t testing.TB, iface, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/class/net", iface, file))
	if err != nil {
		t.Fatalf("sysfs: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// SysfsInt is Sysfs as a number (the first field, so "fast 1" is not one).
func SysfsInt(t testing.TB, iface, file string) int {
	t.Helper()
	v, err := strconv.Atoi(strings.Fields(Sysfs(t, iface, file) + " x")[0])
	if err != nil {
		t.Fatalf("sysfs %s/%s: %v", iface, file, err)
	}
	return v
}

// SysfsNum is SysfsInt for a value that may not be a number yet (a fresh
// slave's port state reads "N/A"): ok is false then.
func SysfsNum(t testing.TB, iface, file string) (v int, ok bool) {
	t.Helper()
	v, err := strconv.Atoi(strings.Fields(Sysfs(t, iface, file) + " x")[0])
	return v, err == nil
}

// Counter reads one statistics counter of iface (tx_bytes, ...).
func Counter(t testing.TB, iface, name string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(Sysfs(t, iface, "statistics/"+name), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Counters reads one counter of several interfaces.
func Counters(t testing.TB, name string, ifaces ...string) []uint64 {
	t.Helper()
	out := make([]uint64, len(ifaces))
	for i, f := range ifaces {
		out[i] = Counter(t, f, name)
	}
	return out
}

// ProcLines returns /proc/net/bonding/<bond> as lines.
func ProcLines(t testing.TB, bond string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/net/bonding/" + bond)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// ProcSlave returns, from /proc/net/bonding/<bond>, the lines of one
// slave's section, keyed by their trimmed text before the first colon, in
// order; the "details actor/partner lacp pdu:" subsections prefix their
// keys with "actor " and "partner ".
func ProcSlave(t testing.TB, bond, slave string) map[string]string {
	t.Helper()
	f, err := os.Open("/proc/net/bonding/" + bond)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	in, prefix := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "Slave Interface: "); ok {
			in, prefix = v == slave, ""
			continue
		}
		if !in {
			continue
		}
		switch strings.TrimSpace(line) {
		case "details actor lacp pdu:":
			prefix = "actor "
			continue
		case "details partner lacp pdu:":
			prefix = "partner "
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[prefix+strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if len(out) == 0 {
		t.Fatalf("/proc/net/bonding/%s has no slave %s", bond, slave)
	}
	return out
}

// Eventually polls cond every 10 ms until it holds or timeout passes, and
// returns how long it took. cond's string says what was last seen, for the
// failure message.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok, seen := cond()
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s: not after %v (last seen: %s)", what, timeout, seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Measure reports a figure the lab summary collects (the host picks up the
// "measure:" lines).
func Measure(t testing.TB, name string, value float64, unit string) {
	t.Helper()
	t.Logf("measure: %s = %s %s", name, strconv.FormatFloat(value, 'f', 3, 64), unit)
}

// FormatStates formats LACP port states for messages.
func FormatStates(states []int) string { return fmt.Sprint(states) }

// Show formats a pointer field for messages: its value or "null".
func Show[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// Is reports whether the pointer field holds want.
func Is[T comparable](p *T, want T) bool { return p != nil && *p == want }

// KernelVersion is the running kernel, as uname(2) reports it, for
// scenarios whose expectations change with the kernel (the lab boots 6.1
// and 6.12).
type KernelVersion struct {
	Release      string // "6.12.117+deb12-amd64"
	Major, Minor int
}

// Kernel returns the running kernel's version.
func Kernel(t testing.TB) KernelVersion {
	t.Helper()
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		t.Fatalf("uname: %v", err)
	}
	k := KernelVersion{Release: unix.ByteSliceToString(uts.Release[:])}
	if _, err := fmt.Sscanf(k.Release, "%d.%d", &k.Major, &k.Minor); err != nil {
		t.Fatalf("kernel release %q: %v", k.Release, err)
	}
	return k
}

// AtLeast reports whether the kernel is major.minor or newer.
func (k KernelVersion) AtLeast(major, minor int) bool {
	return k.Major > major || k.Major == major && k.Minor >= minor
}

// TCX reports whether BPF programs attach at TC through TCX links (Linux
// 6.6 and later); older kernels have only the clsact qdisc with cls_bpf
// filters.
func (k KernelVersion) TCX() bool { return k.AtLeast(6, 6) }

func (k KernelVersion) String() string { return k.Release }

// Judge runs one of the tools the host packs into /bin as judges (lab.Judges:
// iproute2's tc, bpftool) and returns its standard output; it fails the test
// when the tool fails. Tests call it to see the kernel's view through a tool
// other than bondtop (tc filter show, bpftool map dump); bondtop never runs
// these.
func Judge(t testing.TB, tool string, args ...string) string {
	t.Helper()
	var stderr strings.Builder
	cmd := exec.Command("/bin/"+tool, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", tool, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out)
}
