package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDashboardLetsGoOfStartupPages: the real dashboard in tmux, on a
// tree whose counters move, has fewer of its program's pages resident
// once start-up settled (giveBackMemory: the heap's free pages and the
// program's file pages it no longer runs) than at its peak before, and
// goes on working: it draws new rates, and a key it had not been pressed
// before opens the help, whose code is mapped back as it runs.
func TestDashboardLetsGoOfStartupPages(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	dir := lacpTree(t)
	stop := advance(t, dir, map[string][2]float64{
		"e1": {120e6, 240e6}, "e2": {360e6, 48e6}, "e3": {1.2e9, 600e6}, "e4": {75e6, 960e6},
		"bond0": {1.755e9, 1.848e9},
	})
	defer stop()
	p := newPane(t, 160, 48, fmt.Sprintf("%s --root %s --interval 200ms bond0; sleep 60", bin, dir))
	pid := childPID(t, strings.TrimSpace(p.tmux("display-message", "-p", "-t", "main", "#{pane_pid}")))

	// Polled from the start: start-up settles startupSettled (3 s) after
	// the dashboard starts, so the peak is seen before the trim.
	var peak, last int64
	deadline := time.Now().Add(startupSettled + 3*time.Second)
	for time.Now().Before(deadline) {
		if file := rssFile(t, pid); file > peak {
			peak = file
		}
		time.Sleep(50 * time.Millisecond)
	}
	last = rssFile(t, pid)
	t.Logf("the program's file pages resident: %d kB at the peak, %d kB once settled", peak, last)
	if last > peak*85/100 {
		t.Errorf("%d kB of the program's pages resident once settled, %d kB at the peak: want at most 85%%", last, peak)
	}
	p.waitFor("rates of all four slaves", 10*time.Second, func(s string) bool {
		return len(tableRates(s, []string{"e1", "e2", "e3", "e4"})) == 4
	})
	p.keys("?")
	p.waitText("LACP port state flags", 5*time.Second)
}

// rssFile is the RssFile of pid in kB: the file pages it has mapped.
func rssFile(t *testing.T, pid string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "RssFile:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatalf("/proc/%s/status has no RssFile", pid)
	return 0
}
