package metrics

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/diagnose"
)

// TestDemoFiresShippedRules leaves the demo running for 10 minutes, as
// Prometheus would see it (scraped every 15 s, rules evaluated every
// minute, the default), and has promtool evaluate the shipped rules on
// those scrapes: every alert but the two about bondtop itself fires.
// The demo starts just after its long incidents began, the worst moment.
func TestDemoFiresShippedRules(t *testing.T) {
	promtool := needPromtool(t)
	const scrapes = 41 // 0 s to 10 min
	start := time.Date(2026, 12, 2, 12, 2, 10, 0, time.UTC)
	now := start
	clock := func() time.Time { return now }
	s := collector.NewSampler(collector.NewDemoSource(clock), collector.Options{Clock: clock, Analyze: diagnose.NewWindow(0).Fill})
	e := New(Version("test"))
	series := map[string][]string{} // series -> value per scrape
	for i := range scrapes {
		for range 15 { // bondtop samples every second between scrapes
			snap, err := s.Sample()
			if err != nil {
				t.Fatal(err)
			}
			e.Update(snap)
			now = now.Add(time.Second)
		}
		for name, f := range scrape(t, e) {
			if !strings.HasPrefix(name, "bondtop_") {
				continue
			}
			for _, m := range f.Metric {
				labels := []string{`job="bondtop"`, `instance="demo"`}
				for _, lp := range m.Label {
					labels = append(labels, lp.GetName()+"="+strconv.Quote(lp.GetValue()))
				}
				key := name + "{" + strings.Join(labels, ",") + "}"
				if series[key] == nil {
					series[key] = slices.Repeat([]string{"_"}, scrapes)
				}
				v := m.GetGauge().GetValue()
				if m.Counter != nil {
					v = m.Counter.GetValue()
				}
				series[key][i] = strconv.FormatFloat(v, 'f', -1, 64)
			}
		}
	}
	// A series that leaves a scrape is stale from then on, as Prometheus
	// marks it; before its first scrape it has no samples.
	keys := make([]string, 0, len(series))
	for k, values := range series {
		keys = append(keys, k)
		seen := false
		for i, v := range values {
			seen = seen || v != "_"
			if seen && v == "_" {
				values[i] = "stale"
			}
		}
	}
	sort.Strings(keys)
	var y strings.Builder
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&y, "rule_files: [%q]\nevaluation_interval: 1m\ntests:\n  - interval: 15s\n    input_series:\n", rules)
	fmt.Fprintf(&y, "      - series: 'up{job=\"bondtop\",instance=\"demo\"}'\n        values: '1x%d'\n", scrapes-1)
	for _, k := range keys {
		fmt.Fprintf(&y, "      - series: %s\n        values: '%s'\n", strconv.Quote(k), strings.Join(series[k], " "))
	}
	// Ask for silence every minute: promtool then lists what fired.
	y.WriteString("    alert_rule_test:\n")
	alerts := []string{"BondtopDown", "BondtopBlind", "BondtopSlaveDown", "BondtopSlaveFlapping", "BondtopLACPNotAggregating", "BondtopDegraded", "BondtopImbalance"}
	for m := 1; m <= 10; m++ {
		for _, a := range alerts {
			fmt.Fprintf(&y, "      - eval_time: %dm\n        alertname: %s\n        exp_alerts: []\n", m, a)
		}
	}
	file := filepath.Join(t.TempDir(), "demo.test.yml")
	if err := os.WriteFile(file, []byte(y.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(promtool, "test", "rules", file)
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // fails whenever anything fired: that is the point
	fired := map[string]bool{}
	for _, m := range regexp.MustCompile(`alertname="(\w+)"`).FindAllStringSubmatch(out.String(), -1) {
		fired[m[1]] = true
	}
	if len(fired) == 0 && !strings.Contains(out.String(), "FAILED") {
		t.Fatalf("promtool found nothing firing, or did not run:\n%s", out.String())
	}
	first := map[string]string{} // alert -> first evaluation it fired at
	for _, m := range regexp.MustCompile(`alertname: (\w+), time: (\w+),\s+exp:\[\],?\s+got:\[\s+0:`).FindAllStringSubmatch(out.String(), -1) {
		if first[m[1]] == "" {
			first[m[1]] = m[2]
		}
	}
	t.Logf("fired first at: %v", first)
	for _, a := range alerts {
		want := a != "BondtopDown" && a != "BondtopBlind"
		if fired[a] != want {
			t.Errorf("%s fired %v within 10 minutes of the demo, want %v", a, fired[a], want)
		}
	}
	if t.Failed() {
		t.Logf("promtool:\n%s", out.String())
	}
}

// needPromtool returns promtool's path; under CI=true its absence fails.
func needPromtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing (scripts/test-deps.sh installs Debian's prometheus package)")
		}
		t.Skip("promtool is missing: run scripts/test-deps.sh")
	}
	return p
}
