package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bondtop/bondtop/internal/testbin"
	"github.com/bondtop/bondtop/internal/testtree"
)

// binary is the real bondtop, built once per test run.
func binary(t *testing.T) string { return testbin.Build(t, ".") }

// hostTree writes an 802.3ad bond0 over eth0..eth3, as procfs and sysfs
// show it to root on a 6.x kernel, with every counter at zero.
func hostTree(t *testing.T) string {
	t.Helper()
	tree := testtree.New(t)
	tree.ProcFile("bond0", "8023ad-6.8-healthy-root.txt")
	tree.Write("sys/class/net/bonding_masters", "bond0\n")
	tree.Write("sys/class/net/bond0/bonding/mode", "802.3ad 4\n")
	tree.Write("sys/class/net/bond0/bonding/slaves", "e1 e2\n")
	for _, ifname := range []string{"bond0", "e1", "e2"} {
		writeStat(t, tree.Dir, ifname, 0, 0, true)
	}
	return tree.Dir
}

// TestOnceJSONRatesFromAdvancingCounters runs the real binary on a tree
// whose counters a goroutine advances at known rates, and checks the rates
// bondtop prints within 2%. The writer's lag varies with the machine's load
// (a loaded CI host delays it by tens of milliseconds now and then), so the
// check takes the median of three one-second samples, as one would read a
// `watch` display, rather than trusting a single interval.
func TestOnceJSONRatesFromAdvancingCounters(t *testing.T) {
	bin := binary(t)
	dir := hostTree(t)
	rates := map[string][2]float64{ // bytes/s rx, tx
		"e1":    {2_000_000, 30_000_000},
		"e2":    {1_000_000, 10_000_000},
		"bond0": {3_000_000, 40_000_000},
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	// The counters go to one /proc/net/dev file, replaced whole each
	// round: every interface then lags the clock by the same small amount,
	// where fifty statistics files written one after another lag by a
	// different amount each (tens of milliseconds on a loaded CI host).
	for _, ifname := range []string{"bond0", "e1", "e2"} {
		if err := os.RemoveAll(filepath.Join(dir, "sys/class/net", ifname, "statistics")); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		defer wg.Done()
		start := time.Now()
		for ctx.Err() == nil {
			el := time.Since(start).Seconds()
			bytes := map[string][2]uint64{}
			for ifname, r := range rates {
				bytes[ifname] = [2]uint64{uint64(r[0] * el), uint64(r[1] * el)}
			}
			writeNetDev(t, dir, bytes)
			time.Sleep(time.Millisecond)
		}
	}()
	out, err := exec.Command(bin, "--root", dir, "--count", "3", "--json", "--interval", "1s").Output()
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatalf("bondtop: %v", err)
	}
	type iface struct {
		Name  string   `json:"name"`
		RxBps *float64 `json:"rx_bps"`
		TxBps *float64 `json:"tx_bps"`
	}
	got := map[string][2][]float64{}
	add := func(i iface) {
		if i.RxBps == nil || i.TxBps == nil {
			t.Fatalf("%s: a rate is null", i.Name)
		}
		g := got[i.Name]
		g[0], g[1] = append(g[0], *i.RxBps), append(g[1], *i.TxBps)
		got[i.Name] = g
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out)
	}
	for _, line := range lines {
		var doc struct {
			Bonds []struct {
				iface
				Slaves []iface `json:"slaves"`
			} `json:"bonds"`
		}
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, line)
		}
		if len(doc.Bonds) != 1 || len(doc.Bonds[0].Slaves) != 2 {
			t.Fatalf("unexpected document: %s", line)
		}
		add(doc.Bonds[0].iface)
		for _, s := range doc.Bonds[0].Slaves {
			add(s)
		}
	}
	for name, want := range rates {
		for dirIdx, dirName := range []string{"rx", "tx"} {
			samples := slices.Clone(got[name][dirIdx])
			slices.Sort(samples)
			median := samples[len(samples)/2]
			w := want[dirIdx] * 8
			e := math.Abs(median-w) / w
			if e > 0.02 {
				t.Errorf("%s %s: median %.0f bit/s of %v, want %.0f (error %.2f%%)", name, dirName, median, samples, w, e*100)
			} else {
				t.Logf("%s %s: median %.0f bit/s, want %.0f (error %.3f%%)", name, dirName, median, w, e*100)
			}
		}
	}
}

func runBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestUnknownBondExit2(t *testing.T) {
	dir := hostTree(t)
	_, stderr, code := runBinary(t, "--root", dir, "--once", "bond9")
	if code != 2 || !strings.Contains(stderr, "bond9 not found; bonds here: bond0") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestNoDriverSaysSo(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runBinary(t, "--root", dir, "list")
	if code != 1 || !strings.Contains(stderr, "no bonding driver") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestListAndTextTable(t *testing.T) {
	dir := hostTree(t)
	out, stderr, code := runBinary(t, "--root", dir, "list")
	if code != 0 || !strings.Contains(out, "bond0") || !strings.Contains(out, "802.3ad") || !strings.Contains(out, "e1,e2") {
		t.Fatalf("list: exit %d out %q err %q", code, out, stderr)
	}
	out, stderr, code = runBinary(t, "--root", dir, "--once", "--interval", "100ms", "bond0")
	if code != 0 {
		t.Fatalf("--once: exit %d err %q", code, stderr)
	}
	for _, want := range []string{"bond0  802.3ad  layer2+3", "aggregator 1 (2 ports)", "partner 02:fc:ce:91:32:14", "e1", "e2", "63"} {
		if !strings.Contains(out, want) {
			t.Errorf("--once output lacks %q:\n%s", want, out)
		}
	}
}

func TestCountJSONLines(t *testing.T) {
	dir := hostTree(t)
	out, stderr, code := runBinary(t, "--root", dir, "--count", "3", "--json", "--interval", "100ms")
	if code != 0 {
		t.Fatalf("exit %d err %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out)
	}
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line is not JSON: %v: %s", err, l)
		}
	}
}
