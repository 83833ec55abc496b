package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDashboardCPUAndMemory measures what the dashboard costs the host:
// the real binary in a tmux pane on a 4-slave 802.3ad tree whose counters
// move, a minute per case, reading the process's CPU time (utime+stime in
// /proc/PID/stat) and its resident memory. Two kinds of tree: counters in
// one /proc/net/dev (one read per sample, as cheap as the live source's
// netlink dump) and in statistics/ files (ten files per interface per
// sample). It takes several minutes, so it runs only with
// BONDTOP_MEASURE=1; the figures go to docs/performance.md.
//
//	BONDTOP_MEASURE=1 go test -run TestDashboardCPUAndMemory -v ./cmd/bondtop
func TestDashboardCPUAndMemory(t *testing.T) {
	if os.Getenv("BONDTOP_MEASURE") != "1" {
		t.Skip("a measurement of several minutes: set BONDTOP_MEASURE=1 to run it")
	}
	needTmux(t)
	bin := binary(t)
	rates := map[string][2]float64{
		"e1": {120e6, 240e6}, "e2": {360e6, 48e6}, "e3": {1.2e9, 600e6}, "e4": {75e6, 960e6},
		"bond0": {1.755e9, 1.848e9},
	}
	statsTree := lacpTree(t)
	stop := advance(t, statsTree, rates)
	defer stop()
	netdevTree := netdevLACPTree(t)
	stop2 := advanceNetDev(t, netdevTree, rates)
	defer stop2()

	span := 60 * time.Second
	if s := os.Getenv("BONDTOP_MEASURE_SECONDS"); s != "" {
		n, _ := strconv.Atoi(s)
		span = time.Duration(n) * time.Second
	}
	for _, run := range []struct {
		tree, treeName string
		width, height  int
		interval       string
		keys           []string // pressed once the screen is up
		window         string
	}{
		{netdevTree, "/proc/net/dev", 80, 24, "1s", nil, "1m"},
		{netdevTree, "/proc/net/dev", 160, 48, "1s", nil, "1m"},
		{netdevTree, "/proc/net/dev", 80, 24, "100ms", nil, "1m"},
		{netdevTree, "/proc/net/dev", 160, 48, "100ms", nil, "1m"},
		{netdevTree, "/proc/net/dev", 160, 48, "100ms", []string{"g", "g"}, "1h"},
		{statsTree, "statistics/", 160, 48, "1s", nil, "1m"},
		{statsTree, "statistics/", 160, 48, "100ms", nil, "1m"},
	} {
		p := newPane(t, run.width, run.height, fmt.Sprintf("%s --root %s --interval %s bond0; sleep 600", bin, run.tree, run.interval))
		p.waitText("bond0", 10*time.Second)
		p.keys(run.keys...)
		pid := childPID(t, strings.TrimSpace(p.tmux("display-message", "-p", "-t", "main", "#{pane_pid}")))
		cpu0, at0 := cpuTicks(t, pid), time.Now()
		time.Sleep(span)
		cpu1, at1 := cpuTicks(t, pid), time.Now()
		rss, hwm := memory(t, pid)
		const ticksPerSecond = 100 // USER_HZ, fixed by the kernel ABI
		used := float64(cpu1-cpu0) / ticksPerSecond
		t.Logf("%-13s %3dx%-2d every %-5s window %s: CPU %.2f s in %.0f s = %.2f%% of a core; RSS %.1f MB (peak %.1f MB)",
			run.treeName, run.width, run.height, run.interval, run.window,
			used, at1.Sub(at0).Seconds(), 100*used/at1.Sub(at0).Seconds(), float64(rss)/1024, float64(hwm)/1024)
		p.keys("q")
	}
}

// netdevLACPTree is lacpTree with its counters in proc/net/dev instead of
// statistics/ directories.
func netdevLACPTree(t *testing.T) string {
	t.Helper()
	dir := lacpTree(t)
	if err := os.RemoveAll(filepath.Join(dir, "sys/class/net")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sys/class/net"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sys/class/net/bonding_masters"), []byte("bond0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeNetDev(t, dir, map[string][2]uint64{})
	return dir
}

// writeNetDev replaces proc/net/dev with the given rx, tx byte counters.
func writeNetDev(t *testing.T, dir string, bytes map[string][2]uint64) {
	var b strings.Builder
	b.WriteString("Inter-|   Receive                                                |  Transmit\n")
	b.WriteString(" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n")
	for _, ifname := range []string{"bond0", "e1", "e2", "e3", "e4"} {
		c := bytes[ifname]
		fmt.Fprintf(&b, "%6s: %d %d 0 0 0 0 0 0 %d %d 0 0 0 0 0 0\n", ifname, c[0], c[0]/1500, c[1], c[1]/1500)
	}
	p := filepath.Join(dir, "proc/net/dev")
	if err := os.WriteFile(p+".tmp", []byte(b.String()), 0o644); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Error(err)
	}
}

// advanceNetDev is advance for a proc/net/dev tree.
func advanceNetDev(t *testing.T, dir string, rates map[string][2]float64) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		for ctx.Err() == nil {
			s := time.Since(start).Seconds()
			bytes := map[string][2]uint64{}
			for ifname, r := range rates {
				bytes[ifname] = [2]uint64{uint64(r[0] / 8 * s), uint64(r[1] / 8 * s)}
			}
			writeNetDev(t, dir, bytes)
			time.Sleep(5 * time.Millisecond)
		}
	})
	return func() { cancel(); wg.Wait() }
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
	rss, hwm, err := readMemory(pid)
	if err != nil {
		t.Fatal(err)
	}
	return rss, hwm
}

// readMemory is VmRSS and VmHWM of pid in kB.
func readMemory(pid string) (rss, hwm int64, err error) {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, 0, err
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
	return rss, hwm, nil
}
