//go:build !nometrics

package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFleetViewInTmux runs the real binary as an admin of a fleet would:
// `bondtop --prometheus URL` on a terminal, against Debian's Prometheus
// scraping two real exporters (the demo, and a lab capture under another
// job) and a target that never answers. A selector that matches nothing
// says so. The bond list names every
// (instance, bond) Prometheus holds, worst first; / and Enter open one
// bond's dashboard with its slaves, the header saying how old the data
// is; b returns to the list; when Prometheus stops, the screen keeps the
// last data and says so, naming the URL.
func TestFleetViewInTmux(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	demo, capture, dead := unusedLoopbackAddr(t), unusedLoopbackAddr(t), unusedLoopbackAddr(t)
	for _, e := range []struct{ addr, src string }{{demo, "--demo"}, {capture, "--root=../../testdata/lab/ActiveBackupFailover"}} {
		cmd := exec.Command(bin, e.src, "--headless", "--listen", e.addr, "--interval", "500ms")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	}
	prom := startPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: bondtop
    static_configs: [{targets: [%q, %q]}]
  - job_name: edge
    static_configs: [{targets: [%q]}]
`, demo, dead, capture))
	url := "http://" + prom.addr

	// What the fleet holds, once every exporter is scraped with rates.
	var doc fleetJSON
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := exec.Command(bin, "--prometheus", url, "--once", "--json").Output()
		doc = fleetJSON{}
		if err == nil {
			err = json.Unmarshal(out, &doc)
		}
		rates := 0
		for _, b := range doc.Bonds {
			if b.TxBps != nil {
				rates++
			}
		}
		if err == nil && len(doc.Bonds) > 1 && rates == len(doc.Bonds) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s Prometheus holds no complete fleet: %v %+v\nprometheus log:\n%s", err, doc, prom.log.String())
		}
		time.Sleep(time.Second)
	}

	// A selector that matches nothing: the screen says so, naming the URL.
	empty := newPane(t, 160, 30, bin+" --prometheus "+url+` --prometheus-match '{job="nothing"}'`)
	empty.waitText("no bonds: prometheus at "+url+" holds no bond", 15*time.Second)
	empty.keys("q")

	p := newPane(t, 160, 50, bin+" --prometheus "+url)
	screen := p.waitText(fmt.Sprintf("%d bonds: choose one", len(doc.Bonds)), 20*time.Second)
	// Every (instance, bond) once, worst first by what the list shows.
	rows := regexp.MustCompile(`║ (?:\d )?(\S+/\S+)\s+\S+\s+\d+/\d+\s+\S+\s+\S+\s+(CRIT|WARN|INFO|-)`).FindAllStringSubmatch(screen, -1)
	var listed []string
	rank := map[string]int{"CRIT": 0, "WARN": 1, "INFO": 2, "-": 3}
	for i, r := range rows {
		listed = append(listed, r[1])
		if i > 0 && rank[r[2]] < rank[rows[i-1][2]] {
			t.Errorf("%s (%s) is listed after %s (%s): not worst first\n%s", r[1], r[2], rows[i-1][1], rows[i-1][2], screen)
		}
	}
	for _, b := range doc.Bonds {
		if n := slices.Index(listed, b.Instance+"/"+b.Name); n < 0 {
			t.Errorf("%s/%s is not in the list %v\n%s", b.Instance, b.Name, listed, screen)
		}
	}
	if len(listed) != len(doc.Bonds) {
		t.Errorf("%d rows, %d bonds in Prometheus: %v", len(listed), len(doc.Bonds), listed)
	}

	// / finds the capture's bond by its instance; Enter opens it.
	port := capture[strings.LastIndex(capture, ":")+1:]
	p.keys(append([]string{"/"}, strings.Split(port, "")...)...)
	p.waitText("1 match", 5*time.Second)
	p.keys("Enter")
	screen = p.waitFor("the capture's dashboard", 10*time.Second, func(s string) bool {
		return strings.Contains(s, capture+"/bond0") && strings.Contains(s, "dut0") && strings.Contains(s, "dut1") && strings.Contains(s, " old")
	})
	if !regexp.MustCompile(`data \d+s old`).MatchString(screen) {
		t.Errorf("the header does not say how old the data is:\n%s", screen)
	}
	if strings.Contains(screen, "failover: active slave") {
		t.Errorf("opening a bond is no failover:\n%s", screen)
	}
	if !strings.Contains(screen, "active-backup") || !strings.Contains(screen, "active dut1") {
		t.Errorf("the capture's bond is not shown as its exporter reports it (active-backup, dut1 active):\n%s", screen)
	}
	// [ and ] step through the bonds in the list's order: the header
	// counts in it.
	n := len(doc.Bonds)
	m := regexp.MustCompile(regexp.QuoteMeta(capture+"/bond0") + ` (\d+)/(\d+)`).FindStringSubmatch(screen)
	if m == nil || m[2] != fmt.Sprint(n) {
		t.Fatalf("the header does not place the bond among %d:\n%s", n, screen)
	}
	var at int
	fmt.Sscan(m[1], &at)
	p.keys("]")
	p.waitFor("the next bond", 5*time.Second, func(s string) bool {
		header, _, _ := strings.Cut(s, "\n")
		return !strings.Contains(header, capture+"/bond0 ") && strings.Contains(header, fmt.Sprintf(" %d/%d ", at%n+1, n))
	})
	p.keys("[")
	p.waitText(capture+"/bond0 ", 5*time.Second)
	p.keys("b")
	p.waitText("bonds: choose one", 5*time.Second)
	p.keys("Escape")

	// Prometheus stops: the last data stays, marked, naming the URL.
	prom.stop()
	p.waitFor("the stale mark", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "prometheus at "+url) && strings.Contains(s, "showing what it said at") && strings.Contains(s, capture+"/bond0")
	})
	p.keys("q")
}

// TestFleetViewPrometheusDown: on a terminal, a Prometheus that refuses
// ends the fleet view before it opens, with the URL and the reason,
// within 15 s, exit code 1.
func TestFleetViewPrometheusDown(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	url := "http://" + unusedLoopbackAddr(t)
	start := time.Now()
	p := newPane(t, 120, 30, bin+" --prometheus "+url+"; echo exit=$?; sleep 60")
	screen := p.waitText("exit=", 15*time.Second)
	if !strings.Contains(screen, "prometheus at "+url) || !strings.Contains(screen, "refused") || !strings.Contains(screen, "exit=1") {
		t.Errorf("want the URL, the reason and exit code 1:\n%s", screen)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v", d)
	}
}
