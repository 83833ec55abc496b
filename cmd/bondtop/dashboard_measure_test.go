package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDashboardCPUAndMemory measures what the dashboard costs the host:
// the real binary in a tmux pane on a 4-slave 802.3ad tree whose counters
// move, for a minute at 1 s and a minute at 100 ms, then a minute at
// 100 ms with the 1 h graph window. It reads the process's CPU time
// (utime+stime in /proc/PID/stat) and its resident memory. It takes
// three minutes, so it runs only with BONDTOP_MEASURE=1; the figures go to
// the README.
//
//	BONDTOP_MEASURE=1 go test -run TestDashboardCPUAndMemory -v ./cmd/bondtop
func TestDashboardCPUAndMemory(t *testing.T) {
	if os.Getenv("BONDTOP_MEASURE") != "1" {
		t.Skip("a 3-minute measurement: set BONDTOP_MEASURE=1 to run it")
	}
	needTmux(t)
	bin := binary(t)
	dir := lacpTree(t)
	stop := advance(t, dir, map[string][2]float64{
		"e1": {120e6, 240e6}, "e2": {360e6, 48e6}, "e3": {1.2e9, 600e6}, "e4": {75e6, 960e6},
		"bond0": {1.755e9, 1.848e9},
	})
	defer stop()
	span := 60 * time.Second
	if s := os.Getenv("BONDTOP_MEASURE_SECONDS"); s != "" {
		n, _ := strconv.Atoi(s)
		span = time.Duration(n) * time.Second
	}
	for _, run := range []struct {
		interval string
		keys     []string // pressed once the screen is up
		what     string
	}{
		{"1s", nil, "1 s interval, 1 min window"},
		{"100ms", nil, "100 ms interval, 1 min window"},
		{"100ms", []string{"g", "g"}, "100 ms interval, 1 h window"},
	} {
		p := newPane(t, 160, 48, fmt.Sprintf("%s --root %s --interval %s bond0; sleep 600", bin, dir, run.interval))
		p.waitText("bond0 slaves", 10*time.Second)
		p.keys(run.keys...)
		pid := childPID(t, strings.TrimSpace(p.tmux("display-message", "-p", "-t", "main", "#{pane_pid}")))
		cpu0, at0 := cpuTicks(t, pid), time.Now()
		time.Sleep(span)
		cpu1, at1 := cpuTicks(t, pid), time.Now()
		rss, hwm := memory(t, pid)
		const ticksPerSecond = 100 // USER_HZ, fixed by the kernel ABI
		used := float64(cpu1-cpu0) / ticksPerSecond
		t.Logf("%-32s CPU %.3f s in %.0f s = %.2f%% of a core; RSS %d kB (peak %d kB)",
			run.what, used, at1.Sub(at0).Seconds(), 100*used/at1.Sub(at0).Seconds(), rss, hwm)
		p.keys("q")
	}
}

// childPID is the pid of the first child of the pane's shell: bondtop.
func childPID(t *testing.T, shell string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, err := os.ReadFile(filepath.Join("/proc", shell, "task", shell, "children"))
		if err == nil {
			if f := strings.Fields(string(data)); len(f) > 0 {
				return f[0]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no child of pane shell %s: %v", shell, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cpuTicks is utime+stime of pid, in clock ticks.
func cpuTicks(t *testing.T, pid string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, utime 14, stime 15.
	rest := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(rest[11], 10, 64)
	stime, _ := strconv.ParseInt(rest[12], 10, 64)
	return utime + stime
}

// memory is VmRSS and VmHWM of pid in kB.
func memory(t *testing.T, pid string) (rss, hwm int64) {
	t.Helper()
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v
		case "VmHWM:":
			hwm = v
		}
	}
	return rss, hwm
}
