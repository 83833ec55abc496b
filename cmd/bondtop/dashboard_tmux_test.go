package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The dashboard as a user gets it: the real binary in a real terminal
// (a tmux pane), keys sent with send-keys, the screen read with
// capture-pane.

// needTmux skips without tmux, except under CI where a missing tmux is a
// broken machine (scripts/test-deps.sh installs it).
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is missing: run scripts/test-deps.sh (make deps)")
		}
		t.Skip("tmux is missing: run scripts/test-deps.sh to run the terminal tests")
	}
}

// pane is one tmux session running a command, on its own tmux server
// (-L) so tests never touch a user's tmux.
type pane struct {
	t      *testing.T
	socket string
}

func newPane(t *testing.T, width, height int, command string) *pane {
	t.Helper()
	p := &pane{t: t, socket: fmt.Sprintf("bondtop-test-%d-%d", os.Getpid(), time.Now().UnixNano())}
	p.tmux("new-session", "-d", "-s", "main", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), command)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	return p
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (p *pane) screen() string { return p.tmux("capture-pane", "-p", "-t", "main") }

// keys sends each key on its own, a moment apart: an Esc followed at once
// by another key reads as Alt+key to a terminal program.
func (p *pane) keys(keys ...string) {
	for _, k := range keys {
		p.tmux("send-keys", "-t", "main", k)
		time.Sleep(150 * time.Millisecond)
	}
}

// waitFor polls the screen until ok says yes, or fails after timeout.
func (p *pane) waitFor(what string, timeout time.Duration, ok func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := p.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waited %v for %s; the screen:\n%s", timeout, what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *pane) waitText(text string, timeout time.Duration) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q", text), timeout, func(s string) bool { return strings.Contains(s, text) })
}

func (p *pane) waitGone(text string, timeout time.Duration) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q to go", text), timeout, func(s string) bool { return !strings.Contains(s, text) })
}

// lacpTree writes 802.3ad bond0 over e1..e4 (the 4-slave procfs fixture)
// with every counter at zero.
func lacpTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	proc, err := os.ReadFile("../../bonding/testdata/proc/synthetic-8023ad-6.8-4slaves-root.txt")
	if err != nil {
		t.Fatal(err)
	}
	for rel, content := range map[string]string{
		"proc/net/bonding/bond0":        string(proc),
		"sys/class/net/bonding_masters": "bond0\n",
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, ifname := range []string{"bond0", "e1", "e2", "e3", "e4"} {
		writeStat(t, dir, ifname, 0, 0, true)
	}
	return dir
}

// advance moves the tree's byte counters at rates (bit/s rx, tx per
// interface) from now until the returned stop is called. Each pass writes
// only the byte counters: the faster a pass, the closer the files follow
// the clock.
func advance(t *testing.T, dir string, rates map[string][2]float64) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		for ctx.Err() == nil {
			s := time.Since(start).Seconds()
			for ifname, r := range rates {
				writeStat(t, dir, ifname, uint64(r[0]/8*s), uint64(r[1]/8*s), false)
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	return func() { cancel(); wg.Wait() }
}

// parseSI reads the table's short rates: "123M", "1.20G", "75.0M", "0".
func parseSI(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	mult := 1.0
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k':
			mult = 1e3
		case 'M':
			mult = 1e6
		case 'G':
			mult = 1e9
		case 'T':
			mult = 1e12
		}
		if mult != 1 {
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	return v * mult, err == nil
}

// tableRates reads each slave's RX and TX from the slaves table on screen:
// the value sits in the 5 columns under the "RX bit/s" and "TX bit/s"
// titles.
func tableRates(screen string, slaves []string) map[string][2]float64 {
	lines := strings.Split(screen, "\n")
	rxCol, txCol := -1, -1
	out := map[string][2]float64{}
	for _, l := range lines {
		r := []rune(l)
		if i := strings.Index(l, "RX bit/s"); i >= 0 && rxCol < 0 {
			rxCol = len([]rune(l[:i]))
			txCol = len([]rune(l[:strings.Index(l, "TX bit/s")]))
			continue
		}
		if rxCol < 0 || len(r) < txCol+5 {
			continue
		}
		for _, s := range slaves {
			if strings.HasPrefix(strings.TrimLeft(string(r[1:]), " "), s+" ") {
				rx, ok1 := parseSI(string(r[rxCol : rxCol+5]))
				tx, ok2 := parseSI(string(r[txCol : txCol+5]))
				if ok1 && ok2 {
					out[s] = [2]float64{rx, tx}
				}
			}
		}
	}
	return out
}

func TestDashboardInTmux(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	dir := lacpTree(t)
	rates := map[string][2]float64{
		"e1": {120e6, 240e6}, "e2": {360e6, 48e6}, "e3": {1.2e9, 600e6}, "e4": {75e6, 960e6},
	}
	var sumRx, sumTx float64
	for _, r := range rates {
		sumRx += r[0]
		sumTx += r[1]
	}
	all := map[string][2]float64{"bond0": {sumRx, sumTx}}
	for k, v := range rates {
		all[k] = v
	}
	stop := advance(t, dir, all)
	defer stop()

	exitFile := filepath.Join(t.TempDir(), "exit")
	p := newPane(t, 100, 30, fmt.Sprintf("%s --root %s bond0; echo $? > %s; echo bondtop-exited; sleep 60", bin, dir, exitFile))

	slaves := []string{"e1", "e2", "e3", "e4"}
	// The first screen has no rates (one sample); then each second shows
	// the rates of the last one. The writer above lags its own clock by
	// however long the machine lets it sleep, which moves one interval's
	// rate by a few percent on a busy machine: take the median of five.
	p.waitFor("rates of all four slaves", 15*time.Second, func(s string) bool { return len(tableRates(s, slaves)) == 4 })
	readings := map[string][2][]float64{}
	var screen string
	for range 5 {
		time.Sleep(time.Second)
		screen = p.screen()
		for s, r := range tableRates(screen, slaves) {
			v := readings[s]
			v[0], v[1] = append(v[0], r[0]), append(v[1], r[1])
			readings[s] = v
		}
	}
	for _, s := range slaves {
		for i, dir := range []string{"rx", "tx"} {
			want := rates[s][i]
			shown := readings[s][i]
			if len(shown) == 0 {
				t.Errorf("%s %s: no reading", s, dir)
				continue
			}
			have := median(shown)
			if e := math.Abs(have-want) / want; e > 0.05 {
				t.Errorf("%s %s shows %.4g bit/s (median of %.4g), wrote %.4g (%.1f%% off)", s, dir, have, shown, want, e*100)
			} else {
				t.Logf("%s %s shows %.4g bit/s (median of %.4g), wrote %.4g (%.1f%% off)", s, dir, have, shown, want, e*100)
			}
		}
	}
	if t.Failed() {
		t.Fatalf("the screen:\n%s", screen)
	}

	p.keys("?")
	p.waitText("LACP port state flags", 5*time.Second)
	p.keys("Escape")
	p.waitGone("LACP port state flags", 5*time.Second)
	p.keys("Tab")
	p.waitText("╔ LACP", 5*time.Second) // focus moved: the panel's frame doubles
	p.keys("s")
	p.waitText("sort rx", 5*time.Second)
	// Sorted by rx, e3 (1.2 Gbit/s) heads the table.
	if got := tableOrder(p.screen(), slaves); strings.Join(got, ",") != "e3,e2,e1,e4" {
		t.Errorf("sorted by rx: rows %v, want e3,e2,e1,e4", got)
	}
	p.keys("q")
	after := p.waitText("bondtop-exited", 5*time.Second)
	code, err := os.ReadFile(exitFile)
	if err != nil || strings.TrimSpace(string(code)) != "0" {
		t.Errorf("q: exit status %q (%v), want 0", code, err)
	}
	// The terminal is restored: out of the alternate screen, nothing of
	// the dashboard left on it.
	if alt := strings.TrimSpace(p.tmux("display-message", "-p", "-t", "main", "#{alternate_on}")); alt != "0" {
		t.Errorf("after q the pane is still on the alternate screen (alternate_on=%s)", alt)
	}
	if strings.Contains(after, "SLAVE") || strings.Contains(after, "LACP") {
		t.Errorf("after q the dashboard is still on screen:\n%s", after)
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// tableOrder lists the slaves in the order the table shows them (the
// table's rows are the lines with the link column).
func tableOrder(screen string, slaves []string) []string {
	var order []string
	for _, l := range strings.Split(screen, "\n") {
		r := []rune(l)
		if len(r) < 2 || !strings.Contains(l, " up 10G ") {
			continue
		}
		for _, s := range slaves {
			if strings.HasPrefix(string(r[1:]), s+" ") {
				order = append(order, s)
			}
		}
	}
	return order
}

// An unknown bond is the CLI's error, before any screen: exit 2 and the
// bonds there are, on a terminal too.
func TestDashboardUnknownBondInTmux(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	dir := lacpTree(t)
	p := newPane(t, 100, 30, fmt.Sprintf("%s --root %s bond9; echo exit=$?; sleep 60", bin, dir))
	screen := p.waitText("exit=", 10*time.Second)
	if !strings.Contains(screen, "bond9 not found; bonds here: bond0") || !strings.Contains(screen, "exit=2") {
		t.Fatalf("want the not-found error and exit 2:\n%s", screen)
	}
}

// TestRedrawKeyInTmux: what another program writes to the terminal (a
// wall message) stays on the screen, as each frame sends only the cells
// that changed, until Ctrl-L sends the whole screen again. Then htop's
// function keys.
func TestRedrawKeyInTmux(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	dir := lacpTree(t)
	p := newPane(t, 100, 30, fmt.Sprintf("%s --root %s bond0; echo exit=$?; sleep 60", bin, dir))
	p.waitText("bond0", 10*time.Second)
	tty := strings.TrimSpace(p.tmux("display-message", "-p", "-t", "main", "#{pane_tty}"))
	f, err := os.OpenFile(tty, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	const wall = "BROADCAST-MESSAGE-FROM-ROOT"
	_, err = fmt.Fprintf(f, "\x1b[20;10H%s", wall)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	p.waitText(wall, 5*time.Second)
	time.Sleep(2 * time.Second) // two ticks at 1 s
	if !strings.Contains(p.screen(), wall) {
		t.Fatal("the frames after the message sent its cells again: the test cannot tell what Ctrl-L does")
	}
	p.keys("C-l")
	screen := p.waitGone(wall, 5*time.Second)
	if !strings.Contains(screen, "bond0") {
		t.Fatalf("after Ctrl-L the dashboard is not on the screen:\n%s", screen)
	}

	// htop's function keys, as a terminal sends them: F6 sorts, F1 opens
	// and closes the help, F10 quits.
	p.keys("F6")
	p.waitText("sort rx", 5*time.Second)
	p.keys("F1")
	p.waitText("LACP port state flags", 5*time.Second)
	p.keys("F1")
	p.waitGone("LACP port state flags", 5*time.Second)
	p.keys("F10")
	if screen := p.waitText("exit=", 5*time.Second); !strings.Contains(screen, "exit=0") {
		t.Fatalf("F10: want the dashboard to end with status 0:\n%s", screen)
	}
}
