//go:build !nometrics

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bondtop/bondtop/fleet"
)

// fleetJSON is what the test reads of `bondtop --prometheus URL --once
// --json` and of a local `--once --json`.
type fleetJSON struct {
	Bonds []struct {
		Instance   string  `json:"instance"`
		Job        string  `json:"job"`
		ExporterUp *bool   `json:"exporter_up"`
		Name       string  `json:"name"`
		Mode       *string `json:"mode"`
		MIIStatus  *string `json:"mii_status"`
		Slaves     []struct {
			Name         string  `json:"name"`
			MIIStatus    *string `json:"mii_status"`
			AggregatorID *int    `json:"aggregator_id"`
			Actor        *struct {
				PortState *int `json:"port_state"`
			} `json:"actor"`
			Partner *struct {
				PortState *int    `json:"port_state"`
				SystemMAC *string `json:"system_mac"`
			} `json:"partner"`
		} `json:"slaves"`
		Findings []struct {
			ID       string   `json:"id"`
			Severity string   `json:"severity"`
			Slaves   []string `json:"slaves"`
		} `json:"findings"`
		TxBps *float64 `json:"tx_bps"`
		RxBps *float64 `json:"rx_bps"`
	} `json:"bonds"`
	Exporters []struct {
		Instance string `json:"instance"`
		Job      string `json:"job"`
		Up       bool   `json:"up"`
	} `json:"exporters"`
}

// bondViews is each bond as both outputs can say it: mode, slaves (by
// name: Prometheus keeps no enslave order) with their LACP aggregator and
// port states, and findings; with states false, only the mode and the
// slaves' names (the demo's links and findings follow its simulation).
func bondViews(doc fleetJSON, states bool) map[string]string {
	out := map[string]string{}
	for _, b := range doc.Bonds {
		var sl, fs []string
		for _, s := range b.Slaves {
			if states {
				lacp := ""
				if s.AggregatorID != nil {
					lacp += fmt.Sprintf(" agg %d", *s.AggregatorID)
				}
				if s.Actor != nil && s.Actor.PortState != nil {
					lacp += fmt.Sprintf(" actor %d", *s.Actor.PortState)
				}
				if s.Partner != nil && s.Partner.PortState != nil {
					lacp += fmt.Sprintf(" partner %d %s", *s.Partner.PortState, deref(s.Partner.SystemMAC))
				}
				sl = append(sl, s.Name+"="+deref(s.MIIStatus)+lacp)
			} else {
				sl = append(sl, s.Name)
			}
		}
		for _, f := range b.Findings {
			ss := slices.Clone(f.Slaves)
			slices.Sort(ss)
			fs = append(fs, f.ID+"/"+f.Severity+"/"+strings.Join(ss, ","))
		}
		slices.Sort(sl)
		slices.Sort(fs)
		if states {
			out[b.Instance+" "+b.Name] = fmt.Sprintf("mode=%s mii=%s slaves=%v findings=%v", deref(b.Mode), deref(b.MIIStatus), sl, fs)
		} else {
			out[b.Instance+" "+b.Name] = fmt.Sprintf("mode=%s slaves=%v", deref(b.Mode), sl)
		}
	}
	return out
}

// fleetExporter is one bondtop --headless --listen the test runs.
type fleetExporter struct {
	args []string // the source: --demo or --root DIR
	addr string
	job  string
	dc   string // a target label the selector can match
	cmd  *exec.Cmd
}

// TestFleetFromPrometheus has Debian's Prometheus scrape several real
// bondtop exporters (the demo and lab captures) under two job names, and
// reads the fleet back through `bondtop --prometheus`: every bond once,
// with the mode, slaves and findings the exporter's own --once --json
// gives, worst first; the selector scopes; a stopped exporter's bonds
// stay listed as down.
func TestFleetFromPrometheus(t *testing.T) {
	bin := binary(t)
	exps := []*fleetExporter{
		{args: []string{"--demo"}, job: "bondtop", dc: "fra1"},
		{args: []string{"--root", "../../testdata/lab/LACPUnpartnered"}, job: "bondtop", dc: "ams1"},
		{args: []string{"--root", "../../testdata/lab/ActiveBackupFailover"}, job: "edge", dc: "fra1"},
		{args: []string{"--root", "../../testdata/lab/Modes_balance-rr"}, job: "edge", dc: "ams1"},
	}
	dead := unusedLoopbackAddr(t) // in job edge, never answers
	for _, e := range exps {
		e.addr = unusedLoopbackAddr(t)
		e.cmd = exec.Command(bin, append(slices.Clone(e.args), "--headless", "--listen", e.addr, "--interval", "500ms")...)
		if err := e.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.cmd.Process.Signal(syscall.SIGTERM); _ = e.cmd.Wait() })
	}
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n")
	for _, job := range []string{"bondtop", "edge"} {
		fmt.Fprintf(&cfg, "  - job_name: %s\n    static_configs:\n", job)
		for _, e := range exps {
			if e.job == job {
				fmt.Fprintf(&cfg, "      - targets: [%q]\n        labels: {dc: %q}\n", e.addr, e.dc)
			}
		}
		if job == "edge" {
			fmt.Fprintf(&cfg, "      - targets: [%q]\n", dead)
		}
	}
	prom := startPrometheus(t, cfg.String())
	url := "http://" + prom.addr

	// What each exporter says of its own bonds. The demo's links and
	// findings follow its simulation, so only its mode and slaves'
	// names are compared.
	want := map[string]string{}
	demoBonds := map[string]bool{}
	for _, e := range exps {
		out, err := exec.Command(bin, append(slices.Clone(e.args), "--once", "--json")...).Output()
		if err != nil {
			t.Fatalf("%v --once --json: %v", e.args, err)
		}
		var doc fleetJSON
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		for i := range doc.Bonds {
			doc.Bonds[i].Instance = e.addr
		}
		demo := e.args[0] == "--demo"
		for k, v := range bondViews(doc, !demo) {
			want[k] = v
			demoBonds[k] = demo
		}
	}

	read := func(args ...string) (fleetJSON, string, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, append([]string{"--prometheus", url}, args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var doc fleetJSON
		if err == nil && slices.Contains(args, "--json") {
			err = json.Unmarshal(stdout.Bytes(), &doc)
		}
		return doc, stdout.String() + stderr.String(), err
	}
	// Wait until every exporter has been scraped and rates exist.
	var doc fleetJSON
	deadline := time.Now().Add(60 * time.Second)
	for {
		var out string
		var err error
		doc, out, err = read("--once", "--json")
		up, rates := 0, 0
		for _, e := range doc.Exporters {
			if e.Up {
				up++
			}
		}
		for _, b := range doc.Bonds {
			if b.TxBps != nil {
				rates++
			}
		}
		if err == nil && up == len(exps) && len(doc.Bonds) == len(want) && rates == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %v\n%s\nprometheus log:\n%s", err, out, prom.log.String())
		}
		time.Sleep(time.Second)
	}

	got, gotNames := bondViews(doc, true), bondViews(doc, false)
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: not listed", k)
			continue
		}
		if demoBonds[k] {
			g = gotNames[k]
		}
		if g != w {
			t.Errorf("%s:\n got %s\nwant %s", k, g, w)
		}
	}
	seen := map[string]int{}
	for _, b := range doc.Bonds {
		seen[b.Instance+" "+b.Name]++
		job := ""
		for _, e := range exps {
			if e.addr == b.Instance {
				job = e.job
			}
		}
		if b.Job != job {
			t.Errorf("%s %s: job %q, want %q", b.Instance, b.Name, b.Job, job)
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", k, n)
		}
	}
	checkWorstFirst(t, doc)
	deadListed := false
	for _, e := range doc.Exporters {
		if e.Instance == dead {
			deadListed = !e.Up && e.Job == "edge"
		}
	}
	if !deadListed {
		t.Errorf("the exporter that never answered (%s) is not listed as down: %+v", dead, doc.Exporters)
	}

	// The selector scopes every query: only the demo is in fra1.
	scoped, out, err := read("--prometheus-match", `{job="bondtop",dc="fra1"}`, "--once", "--json")
	if err != nil {
		t.Fatalf("--prometheus-match: %v\n%s", err, out)
	}
	nDemo := 0
	for _, demo := range demoBonds {
		if demo {
			nDemo++
		}
	}
	if len(scoped.Bonds) != nDemo || len(scoped.Exporters) != 1 {
		t.Errorf("--prometheus-match {job=\"bondtop\",dc=\"fra1\"}: %d bonds, %d exporters; want %d bonds of the demo, 1 exporter", len(scoped.Bonds), len(scoped.Exporters), nDemo)
	}
	for _, b := range scoped.Bonds {
		if b.Instance != exps[0].addr {
			t.Errorf("--prometheus-match: %s %s is out of scope", b.Instance, b.Name)
		}
	}

	// list: one instance and bond a line, plus the exporter that serves none.
	_, out, err = read("list")
	if err != nil {
		t.Fatalf("list --prometheus: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1+len(want)+1 {
		t.Errorf("list --prometheus: %d lines, want a header, %d bonds and the dead exporter:\n%s", len(lines), len(want), out)
	}
	for k := range want {
		inst, bond, _ := strings.Cut(k, " ")
		if !slices.ContainsFunc(lines, func(l string) bool { f := strings.Fields(l); return len(f) > 2 && f[0] == inst && f[1] == bond }) {
			t.Errorf("list --prometheus: no line for %s", k)
		}
	}

	// Piped, without --once or --count: the table every --interval until
	// interrupted.
	{
		var stdout bytes.Buffer
		cmd := exec.Command(bin, "--prometheus", url, "--interval", "500ms")
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("piped, interrupted: %v", err)
		}
		if n := strings.Count(stdout.String(), "INSTANCE"); n < 2 {
			t.Errorf("piped: %d tables in 2.5 s at --interval 500ms, want several:\n%s", n, stdout.String())
		}
	}

	// --count N: N JSON lines.
	var stdout bytes.Buffer
	cmd := exec.Command(bin, "--prometheus", url, "--count", "2", "--interval", "200ms", "--json")
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("--count 2 --json: %v", err)
	}
	if n := strings.Count(strings.TrimSpace(stdout.String()), "\n") + 1; n != 2 {
		t.Errorf("--count 2 --json: %d lines", n)
	}

	// The past of a bond, for its dashboard's graphs: Prometheus' range
	// query over the rates, the bond's and each slave's, in bit/s.
	{
		c, err := fleet.New(fleet.Config{URL: url, Detail: fleet.DetailLinks})
		if err != nil {
			t.Fatal(err)
		}
		src := fleet.NewSource(c, 0)
		if _, err := src.Read(); err != nil {
			t.Fatal(err)
		}
		bond := exps[2].addr + "/bond0" // the active-backup capture: dut0, dut1
		to := time.Now()
		times, samples, err := src.Past(context.Background(), bond, to.Add(-time.Hour), to)
		if err != nil {
			t.Fatalf("past of %s: %v", bond, err)
		}
		if len(times) == 0 || len(samples) != len(times) {
			t.Fatalf("past of %s: %d times, %d samples", bond, len(times), len(samples))
		}
		last := samples[len(samples)-1]
		if last.Name != bond || last.RxBps == nil || last.TxBps == nil || len(last.Slaves) != 2 ||
			last.Slaves[0].Name != "dut0" || last.Slaves[1].RxBps == nil {
			t.Errorf("past of %s: the last sample %+v", bond, last)
		}
		if times[len(times)-1].After(to) || times[0].Before(to.Add(-time.Hour)) {
			t.Errorf("past of %s: %v..%v is outside the hour asked (%v..%v)", bond, times[0], times[len(times)-1], to.Add(-time.Hour), to)
		}
	}

	// A stopped exporter: its bonds stay listed, as last seen, as down.
	stopped := exps[2]
	_ = stopped.cmd.Process.Signal(syscall.SIGTERM)
	_ = stopped.cmd.Wait()
	deadline = time.Now().Add(30 * time.Second)
	for {
		doc, out, err = read("--once", "--json")
		down := 0
		for _, b := range doc.Bonds {
			if b.Instance == stopped.addr && b.ExporterUp != nil && !*b.ExporterUp {
				down++
				if deref(b.Mode) != "active-backup" || len(b.Slaves) != 2 || len(b.Findings) != 0 || b.TxBps != nil {
					t.Fatalf("the stopped exporter's bond: mode %s, %d slaves, findings %v, tx %v: want its last mode and slaves, no findings or rates", deref(b.Mode), len(b.Slaves), b.Findings, b.TxBps)
				}
			}
		}
		if err == nil && down == 1 && len(doc.Bonds) == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the stopped exporter's bond is not listed as down: %v\n%s", err, out)
		}
		time.Sleep(time.Second)
	}
	checkWorstFirst(t, doc)
}

// checkWorstFirst checks the order of the bonds: critical findings,
// exporter down, warnings, degraded, then the rest busiest first.
func checkWorstFirst(t *testing.T, doc fleetJSON) {
	t.Helper()
	rank := func(i int) int {
		b := doc.Bonds[i]
		sev := map[string]bool{}
		for _, f := range b.Findings {
			sev[f.Severity] = true
		}
		degraded := deref(b.MIIStatus) == "down"
		for _, s := range b.Slaves {
			degraded = degraded || deref(s.MIIStatus) == "down"
		}
		switch {
		case sev["critical"]:
			return 0
		case b.ExporterUp != nil && !*b.ExporterUp:
			return 1
		case sev["warning"]:
			return 2
		case degraded:
			return 3
		}
		return 4
	}
	for i := 1; i < len(doc.Bonds); i++ {
		a, b := rank(i-1), rank(i)
		if a > b {
			t.Errorf("bond %d (%s %s, rank %d) is listed before bond %d (%s %s, rank %d)", i-1, doc.Bonds[i-1].Instance, doc.Bonds[i-1].Name, a, i, doc.Bonds[i].Instance, doc.Bonds[i].Name, b)
		}
		if a == 4 && b == 4 {
			ta, tb := *doc.Bonds[i-1].TxBps+*doc.Bonds[i-1].RxBps, *doc.Bonds[i].TxBps+*doc.Bonds[i].RxBps
			if ta < tb {
				t.Errorf("%s %s (%v bit/s) is listed before the busier %s %s (%v bit/s)", doc.Bonds[i-1].Instance, doc.Bonds[i-1].Name, ta, doc.Bonds[i].Instance, doc.Bonds[i].Name, tb)
			}
		}
	}
}

// TestFleetPrometheusDown: with Prometheus unreachable, or answering
// nothing, --once exits non-zero within 15 s, naming the URL and why.
func TestFleetPrometheusDown(t *testing.T) {
	bin := binary(t)
	// Accepts connections, never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	for _, tc := range []struct{ name, addr, why string }{
		{"unreachable", unusedLoopbackAddr(t), "connection refused"},
		{"silent", ln.Addr().String(), "did not answer within"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := "http://" + tc.addr
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, "--prometheus", url, "--once", "--json")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("exit: %v, want non-zero", err)
			}
			if took > 15*time.Second {
				t.Errorf("took %v, want at most 15 s", took)
			}
			if msg := stderr.String(); !strings.Contains(msg, url) || !strings.Contains(msg, tc.why) {
				t.Errorf("message %q: want the URL %s and %q", msg, url, tc.why)
			}
			if stdout.Len() != 0 {
				t.Errorf("printed %q: nothing invented", stdout.String())
			}
		})
	}
}
