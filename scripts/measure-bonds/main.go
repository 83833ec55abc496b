// Command measure-bonds prints the many-bonds table: for trees of bonds ×
// slaves generated under a temporary directory (counters moving every
// 100 ms), the real bondtop binary's CPU per tick in a --root --count
// --json run at 100 ms, while the diagnosis window fills and once it is
// full, the lines a second it keeps, its peak anonymous memory (RssAnon
// of /proc/PID/status, read at every line: the heap and stacks, what the
// host gives the process) with its peak RSS beside it, and the floor: a
// program (this one, re-run as a child) that only opens and reads the
// files a tick reads, as many times, at the same pace. Linux only (it
// reads /proc/PID/stat and the children's rusage).
//
//	go run ./scripts/measure-bonds -bin bin/bondtop [-sizes 1x2,4x4,64x8,256x2] [-seconds 45]
//
// With -tree DIR it only writes a tree of -size into DIR and moves its
// counters every 100 ms until it is stopped (scripts/measure.sh
// watches such a tree beside bmon). With -hour FILE [-pace D] it
// only writes a recording of an hour of such a tree sampled every D, for
// the dashboard's memory with its history full (--replay FILE --speed N).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bondtop/bondtop/internal/bondtree"
)

const (
	interval   = 100 * time.Millisecond
	windowFull = 32 * time.Second // the diagnosis window (30 s) and a margin
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-floor" {
		floor(os.Args[2:])
		return
	}
	bin := flag.String("bin", "bin/bondtop", "the bondtop binary to measure")
	sizes := flag.String("sizes", "1x2,4x4,64x8,256x2", "bonds x slaves, comma-separated")
	seconds := flag.Int("seconds", 45, "length of each run (the window is full after 32 s)")
	treeDir := flag.String("tree", "", "only write a tree of -size here and move its counters until stopped")
	treeSize := flag.String("size", "1x4", "with -tree or -hour: bonds x slaves")
	hour := flag.String("hour", "", "only write a recording of an hour of a -size tree at -pace to this file")
	pace := flag.Duration("pace", time.Second, "with -hour: the recording's interval")
	flag.Parse()
	if *hour != "" {
		if err := writeHour(*hour, *treeSize, *pace); err != nil {
			fail(err)
		}
		return
	}
	if *treeDir != "" {
		if err := keepTree(*treeDir, *treeSize); err != nil {
			fail(err)
		}
		return
	}
	if *seconds*int(time.Second) <= int(windowFull)+5*int(time.Second) {
		fail(fmt.Errorf("-seconds must leave some time after the window fills (more than %v)", windowFull+5*time.Second))
	}
	fmt.Printf("%-10s %14s %14s %10s %8s %10s %10s %9s\n", "bonds×sl", "ms/tick <30s", "ms/tick full", "floor ms", "ratio", "lines/s", "anon MB", "RSS MB")
	for _, sz := range strings.Split(*sizes, ",") {
		var bonds, slaves int
		if _, err := fmt.Sscanf(sz, "%dx%d", &bonds, &slaves); err != nil {
			fail(fmt.Errorf("size %q: want BONDSxSLAVES", sz))
		}
		if err := measure(*bin, bonds, slaves, *seconds); err != nil {
			fail(err)
		}
	}
}

// keepTree writes a tree and moves its counters every interval, forever.
func keepTree(dir, size string) error {
	var bonds, slaves int
	if _, err := fmt.Sscanf(size, "%dx%d", &bonds, &slaves); err != nil {
		return fmt.Errorf("size %q: want BONDSxSLAVES", size)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr, err := bondtree.Write(dir, bonds, slaves)
	if err != nil {
		return err
	}
	for range time.Tick(interval) {
		if err := tr.Advance(); err != nil {
			return err
		}
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "measure-bonds:", err)
	os.Exit(1)
}

func measure(bin string, bonds, slaves, seconds int) error {
	dir, err := os.MkdirTemp("", "bondtop-measure-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tr, err := bondtree.Write(dir, bonds, slaves)
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	advanced := make(chan error, 1)
	go func() { // the counters move as a host's would
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				advanced <- nil
				return
			case <-t.C:
				if err := tr.Advance(); err != nil {
					advanced <- err
					return
				}
			}
		}
	}()
	defer func() { close(stop); <-advanced }()

	count := seconds * int(time.Second/interval)
	cmd := exec.Command(bin, "--root", dir, "--interval", interval.String(), "--count", strconv.Itoa(count), "--json")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	lines := 0
	// e0..e1: the first 20 s (the window filling); f0..f1: once it is full.
	var e0, e1, f0, f1 cpuMark
	var anonPeak int64
	began := time.Now()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		lines++
		anonPeak = max(anonPeak, anonKB(pid))
		at := time.Since(began)
		switch {
		case lines == 1:
			e0 = mark(pid, lines, at)
		case at < 20*time.Second:
			e1 = mark(pid, lines, at)
		case at >= windowFull && f0.lines == 0:
			f0 = mark(pid, lines, at)
		case f0.lines > 0:
			f1 = mark(pid, lines, at)
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w", bin, err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	peakMB := float64(ru.Maxrss) / 1024

	fl, err := runFloor(tr, f1.lines-f0.lines)
	if err != nil {
		return err
	}
	earlyMs, fullMs := perTick(e0, e1), perTick(f0, f1)
	rate := 0.0
	if f1.at > f0.at {
		rate = float64(f1.lines-f0.lines) / (f1.at - f0.at).Seconds()
	}
	fmt.Printf("%-10s %14.2f %14.2f %10.2f %7.1f× %10.1f %10.1f %9.1f\n", fmt.Sprintf("%d×%d", bonds, slaves), earlyMs, fullMs, fl, fullMs/fl, rate, float64(anonPeak)/1024, peakMB)
	return nil
}

// cpuMark is the child's CPU time when it had printed lines.
type cpuMark struct {
	lines int
	at    time.Duration
	cpu   time.Duration
}

func mark(pid, lines int, at time.Duration) cpuMark {
	return cpuMark{lines: lines, at: at, cpu: procCPU(pid)}
}

// perTick is the CPU milliseconds per line printed between two marks.
func perTick(from, to cpuMark) float64 {
	if to.lines <= from.lines {
		return 0
	}
	return float64(to.cpu-from.cpu) / float64(time.Millisecond) / float64(to.lines-from.lines)
}

// procCPU is a process's user and system time from /proc/PID/stat.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz
}

// anonKB is a process's anonymous resident memory (RssAnon), in kB; 0
// once it is gone.
func anonKB(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "RssAnon:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// runFloor runs this program as a child reading the tick's files n times
// at the same pace, and returns its CPU per tick in milliseconds.
func runFloor(tr *bondtree.Tree, n int) (float64, error) {
	n = max(n, 50)
	list := filepath.Join(tr.Dir, "floor-files")
	if err := os.WriteFile(list, []byte(strings.Join(tr.TickFiles(), "\n")), 0o644); err != nil {
		return 0, err
	}
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, "-floor", list, strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("floor: %w", err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
	return float64(cpu) / float64(time.Millisecond) / float64(n), nil
}

// floor opens and reads every file of the list, n times, one interval
// apart, and nothing else.
func floor(args []string) {
	data, err := os.ReadFile(args[0])
	if err != nil {
		fail(err)
	}
	n, _ := strconv.Atoi(args[1])
	files := strings.Split(string(data), "\n")
	buf := make([]byte, 64<<10)
	t := time.NewTicker(interval)
	defer t.Stop()
	for range n {
		for _, f := range files {
			fd, err := syscall.Open(f, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				fail(err)
			}
			for {
				if k, err := syscall.Read(fd, buf); k <= 0 || err != nil {
					break
				}
			}
			syscall.Close(fd)
		}
		<-t.C
	}
}
