package contrib

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bondtop/bondtop/internal/testbin"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// The shipped alert rules and their promtool tests. Every input series of
// the tests (but up, which Prometheus makes) is a series the real binary
// serves for the fixture its instance label names, and starts with the
// value that scrape gives; what follows is the story the case tells (a
// link lost, a flap, the driver unloaded).
const (
	rulesFile     = "prometheus/bondtop.rules.yml"
	rulesTestFile = "prometheus/bondtop.rules.test.yml"
)

// rootOnlyLine matches what the kernel shows in /proc/net/bonding only to
// CAP_NET_ADMIN: the system priority and MAC, the active aggregator, and
// each slave's LACPDU details (compare bonding/testdata/proc's
// 8023ad-5.14-el9-nonroot with a root capture).
var rootOnlyLine = regexp.MustCompile(`^(System priority|System MAC address|Active Aggregator Info|details (actor|partner) lacp pdu):|^\s`)

// fixtureRoot returns a --root tree for the fixture called name:
//   - a tree of testdata/lab, as it is;
//   - a field capture of bonding/testdata/proc, as /proc/net/bonding/bond0;
//   - NAME.nonroot: the lab tree or capture NAME's /proc/net/bonding/bond0
//     as the kernel shows it without root (no sysfs: the live source
//     reads netlink and procfs, and before 6.x netlink hides the active
//     aggregator without root too);
//   - "nobonding": a host without the bonding driver.
func fixtureRoot(t *testing.T, name string) string {
	t.Helper()
	if name == "nobonding" {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "proc/net/dev"), "Inter-|   Receive\n face |bytes\n")
		return root
	}
	base, nonroot := strings.CutSuffix(name, ".nonroot")
	var capture []byte
	if dir := filepath.Join("../testdata/lab", base); isDir(dir) {
		if !nonroot {
			return dir
		}
		b, err := os.ReadFile(filepath.Join(dir, "proc/net/bonding/bond0"))
		if err != nil {
			t.Fatal(err)
		}
		capture = b
	} else {
		b, err := os.ReadFile(filepath.Join("../bonding/testdata/proc", base+".txt"))
		if err != nil {
			t.Fatalf("fixture %s: neither a lab tree nor a field capture: %v", name, err)
		}
		capture = b
	}
	if nonroot {
		var kept []string
		for _, line := range strings.Split(string(capture), "\n") {
			if !rootOnlyLine.MatchString(line) {
				kept = append(kept, line)
			}
		}
		capture = []byte(strings.Join(kept, "\n"))
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "proc/net/bonding/bond0"), string(capture))
	return root
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

var (
	scrapesMu sync.Mutex
	scrapes   = map[string]map[string]float64{}
)

// scrapeFixture runs `bondtop --headless --root` on the fixture (the demo:
// --demo) and returns a scrape taken after its second sample.
func scrapeFixture(t *testing.T, name string) map[string]float64 {
	t.Helper()
	scrapesMu.Lock()
	defer scrapesMu.Unlock()
	if s := scrapes[name]; s != nil {
		return s
	}
	args := []string{"--interval", "200ms"}
	if name == "demo" {
		args = append(args, "--demo")
	} else {
		args = append(args, "--root", fixtureRoot(t, name))
	}
	e := startExporter(t, args...)
	time.Sleep(500 * time.Millisecond)
	s, err := scrapeOnce(e.addr)
	if err != nil {
		t.Fatalf("scrape %s: %v", name, err)
	}
	scrapes[name] = s
	return s
}

// TestDumpFixtureSeries prints a fixture's scrape, for writing new cases:
// BONDTOP_DUMP=LACPUnpartnered.nonroot go test -run DumpFixture -v ./contrib/
func TestDumpFixtureSeries(t *testing.T) {
	name := os.Getenv("BONDTOP_DUMP")
	if name == "" {
		t.Skip("BONDTOP_DUMP names the fixture to print")
	}
	s := scrapeFixture(t, name)
	keys := make([]string, 0, len(s))
	for k := range s {
		if strings.HasPrefix(k, "bondtop_") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Printf("%s %s\n", k, strconv.FormatFloat(s[k], 'g', -1, 64))
	}
}

// rulesTest is the part of promtool's test file these tests read.
type rulesTest struct {
	Tests []struct {
		InputSeries []struct {
			Series string `yaml:"series"`
			Values string `yaml:"values"`
		} `yaml:"input_series"`
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readRulesTest(t *testing.T) rulesTest {
	t.Helper()
	raw, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var rt rulesTest
	if err := yaml.Unmarshal(raw, &rt); err != nil {
		t.Fatal(err)
	}
	return rt
}

// parseSeries reads promtool's series notation, name{a="x",...}, into a
// name and its labels (a="x").
func parseSeries(s string) (string, map[string]string, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(s + " 0\n"))
	if err != nil {
		return "", nil, err
	}
	for name, f := range fams {
		labels := map[string]string{}
		for _, lp := range f.Metric[0].Label {
			labels[lp.GetName()] = lp.GetValue()
		}
		return name, labels, nil
	}
	return "", nil, fmt.Errorf("no series")
}

// counted are counters that grow with every sample in some fixture's
// state (no driver): their first value is the scrape's timing.
var counted = map[string]bool{`bondtop_sample_errors_total{kind="no_bonding_driver"}`: true}

// TestRuleInputsAreRealScrapes: every input series of the rule tests is a
// series the real binary serves for the fixture its instance label
// names, and starts at the value it serves. bondtop_build_info's labels
// (the version) are the build's, so only its name is checked.
func TestRuleInputsAreRealScrapes(t *testing.T) {
	rt := readRulesTest(t)
	checked := 0
	fixtures := map[string]bool{}
	for _, tc := range rt.Tests {
		for _, in := range tc.InputSeries {
			name, labels, err := parseSeries(in.Series)
			if err != nil {
				t.Fatalf("%s: %v", in.Series, err)
			}
			if name == "up" {
				continue
			}
			instance := labels["instance"]
			if instance == "" || labels["job"] == "" {
				t.Errorf("%s: want a job and the fixture as instance", in.Series)
				continue
			}
			fixtures[instance] = true
			scrape := scrapeFixture(t, instance)
			first := strings.Fields(in.Values)[0]
			first, _, _ = strings.Cut(first, "+")
			first, _, _ = strings.Cut(first, "x")
			want, err := strconv.ParseFloat(first, 64)
			if err != nil {
				t.Errorf("%s: first value %q", in.Series, first)
				continue
			}
			if name == "bondtop_build_info" {
				if _, ok := scrape[seriesKey(name, nil)]; ok || want != 1 {
					t.Errorf("%s: the build info is always 1 and has labels", in.Series)
				}
				continue
			}
			var ls []string
			for k, v := range labels {
				if k != "instance" && k != "job" {
					ls = append(ls, k+"="+strconv.Quote(v))
				}
			}
			key := seriesKey(name, ls)
			got, ok := scrape[key]
			if !ok {
				t.Errorf("%s: bondtop serves no such series for %s", in.Series, instance)
				continue
			}
			if counted[key] && (got > 0) == (want > 0) {
				// Counted once a sample: how many samples the
				// scrape followed is the scrape's timing.
				checked++
				continue
			}
			if got != want {
				t.Errorf("%s starts at %v; the scrape of %s serves %v", in.Series, want, instance, got)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("only %d input series checked", checked)
	}
	t.Logf("%d input series from %d fixtures are real scrapes", checked, len(fixtures))
}

// TestPromtoolRules runs Debian's promtool on the shipped rules: they
// parse, and every case of the test file passes.
func TestPromtoolRules(t *testing.T) {
	promtool := testbin.NeedTool(t, "promtool")
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", rulesTestFile}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// shippedAlerts reads the alerts of the rules file with their severity.
func shippedAlerts(t *testing.T) map[string]string {
	t.Helper()
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	raw, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: needs a summary and a description", r.Alert)
			}
			out[r.Alert] = r.Labels["severity"]
		}
	}
	return out
}

// TestEveryAlertIsTested: some case of the test file expects each shipped
// alert to fire, and some case expects it silent. The generated tests
// count too: TestQuietHostsStaySilent expects every alert silent, and
// TestImbalanceAtEveryScrapeInterval BondtopImbalance to fire.
func TestEveryAlertIsTested(t *testing.T) {
	rt := readRulesTest(t)
	fires, silent := map[string]bool{"BondtopImbalance": true}, map[string]bool{"BondtopImbalance": true}
	for _, tc := range rt.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	for a := range shippedAlerts(t) {
		if !fires[a] || !silent[a] {
			t.Errorf("%s: tested firing %v, silent %v; want both", a, fires[a], silent[a])
		}
	}
}

// runPromtoolTest writes a promtool test file and runs it; it returns
// promtool's output and whether it passed.
func runPromtoolTest(t *testing.T, body string) (string, bool) {
	t.Helper()
	promtool := testbin.NeedTool(t, "promtool")
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "generated.test.yml")
	writeFile(t, file, fmt.Sprintf("rule_files: [%q]\n", rules)+body)
	var out bytes.Buffer
	cmd := exec.Command(promtool, "test", "rules", file)
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err == nil
}

// alertNames lists the shipped alerts, sorted.
func alertNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for a := range shippedAlerts(t) {
		names = append(names, a)
	}
	slices.Sort(names)
	return names
}

// quietFixtures are real hosts with nothing to page for: healthy bonds of
// every mode, as root, and a host without the bonding driver.
var quietFixtures = []string{
	"LACP_slaves-2", "LACP_slaves-4", "8023ad-6.8-healthy-root",
	"activebackup-6.8-primary-reselect", "XORHash_layer34", "Modes_balance-rr",
	"Modes_balance-alb", "nobonding",
}

// TestQuietHostsStaySilent: each quiet fixture's whole scrape, served for
// an hour (scraped every 15 s), raises no alert at 5, 30 or 60 minutes.
// A counter that grows every sample (no_bonding_driver on a host without
// the driver) grows in the hour as bondtop counts it, once a second.
func TestQuietHostsStaySilent(t *testing.T) {
	const points = 240 // an hour at 15 s
	var y strings.Builder
	y.WriteString("evaluation_interval: 15s\ntests:\n  - interval: 15s\n    input_series:\n")
	for _, f := range quietFixtures {
		s := scrapeFixture(t, f)
		keys := make([]string, 0, len(s))
		for k := range s {
			if strings.HasPrefix(k, "bondtop_") {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		fmt.Fprintf(&y, "      - series: 'up{job=\"bondtop\",instance=%q}'\n        values: '1x%d'\n", f, points)
		for _, k := range keys {
			values := fmt.Sprintf("%sx%d", strconv.FormatFloat(s[k], 'f', -1, 64), points)
			if k == `bondtop_sample_errors_total{kind="no_bonding_driver"}` && s[k] > 0 {
				values = fmt.Sprintf("%s+15x%d", strconv.FormatFloat(s[k], 'f', -1, 64), points)
			}
			fmt.Fprintf(&y, "      - series: %s\n        values: '%s'\n", strconv.Quote(withTarget(k, "bondtop", f)), values)
		}
	}
	y.WriteString("    alert_rule_test:\n")
	for _, m := range []int{5, 30, 60} {
		for _, a := range alertNames(t) {
			fmt.Fprintf(&y, "      - eval_time: %dm\n        alertname: %s\n        exp_alerts: []\n", m, a)
		}
	}
	if out, ok := runPromtoolTest(t, y.String()); !ok {
		t.Errorf("an alert fired on a quiet host:\n%s", out)
	}
}

// withTarget adds the job and instance labels a scrape gets to a series
// key.
func withTarget(key, job, instance string) string {
	target := fmt.Sprintf("job=%q,instance=%q", job, instance)
	if name, labels, ok := strings.Cut(key, "{"); ok {
		return name + "{" + target + "," + labels
	}
	return key + "{" + target + "}"
}

// readRecording reads demoRecording: series to presence per second.
func readRecording(t *testing.T) (map[string]string, int) {
	t.Helper()
	raw, err := os.ReadFile(demoRecording)
	if err != nil {
		t.Fatalf("%v (BONDTOP_RECORD_DEMO=17m go test -run TestRecordDemo ./contrib/ makes it)", err)
	}
	rec := map[string]string{}
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("%s: bad line %q", demoRecording, line)
		}
		rec[k], n = v, len(v)
	}
	return rec, n
}

// promtoolValues turns presence (1 or _ per second) into promtool's
// values for scrapes every step seconds from phase: 1 where the scrape
// had the series, stale at the first scrape without it (as Prometheus
// marks a series that leaves), _ after.
func promtoolValues(presence string, step, phase int) string {
	var out []string
	was := false
	for i := phase; i < len(presence); i += step {
		switch {
		case presence[i] == '1':
			out = append(out, "1")
			was = true
		case was:
			out = append(out, "stale")
			was = false
		default:
			out = append(out, "_")
		}
	}
	return strings.Join(out, " ")
}

var firedAt = regexp.MustCompile(`alertname: (\w+), time: (\w+),\s+exp:\[\],?\s+got:\[\s+0:\s+Labels:\{([^}]*)\}`)

// TestImbalanceAtEveryScrapeInterval replays the recording of the real
// demo's permanent imbalance as Prometheus would have scraped it every
// 1, 15, 30 and 60 s, at every phase (in steps of 5 s) a scrape can fall
// on: BondtopImbalance fires for bond0 within 15 minutes, and once it
// fires it stays firing, though the finding's severity and slave flip and
// the finding blinks out at link events. The demo's link events come at
// fixed seconds of a 5-minute cycle: at a phase whose scrapes land on
// them for 5 minutes in a row Prometheus never sees the finding, and no
// rule on it can fire; those phases are told apart, and counted.
func TestImbalanceAtEveryScrapeInterval(t *testing.T) {
	rec, n := readRecording(t)
	var imbalance []string
	for k := range rec {
		if strings.Contains(k, `id="imbalance-`) {
			imbalance = append(imbalance, k)
		}
	}
	slices.Sort(imbalance)
	severities := map[string]bool{}
	for _, k := range imbalance {
		_, labels, err := parseSeries(k)
		if err != nil {
			t.Fatal(err)
		}
		severities[labels["severity"]] = true
	}
	t.Logf("%d s recorded; imbalance series %d, severities %v", n, len(imbalance), severities)
	if len(imbalance) == 0 || len(severities) < 2 {
		t.Fatal("the recording holds no imbalance finding whose severity flips")
	}
	// seen[i]: some imbalance series was in the scrape of second i.
	seen := make([]bool, n)
	for _, k := range imbalance {
		for i := range n {
			seen[i] = seen[i] || rec[k][i] == '1'
		}
	}
	minutes := n / 60
	blind, runs := 0, 0
	for _, step := range []int{1, 15, 30, 60} {
		for phase := 0; phase < step; phase += 5 {
			runs++
			// The longest the scrapes at this phase go without the
			// finding, after its first showing.
			gap, last := 0, -1
			for i := phase; i < n; i += step {
				if seen[i] {
					if last >= 0 {
						gap = max(gap, i-last)
					}
					last = i
				}
			}
			visible := last >= 0 && gap <= 300 && n-last <= 300
			var y strings.Builder
			fmt.Fprintf(&y, "evaluation_interval: 15s\ntests:\n  - interval: %ds\n    input_series:\n", step)
			for _, k := range imbalance {
				fmt.Fprintf(&y, "      - series: %s\n        values: '%s'\n", strconv.Quote(withTarget(k, "bondtop", "demo")), promtoolValues(rec[k], step, phase))
			}
			y.WriteString("    alert_rule_test:\n")
			for m := 1; m <= minutes; m++ {
				fmt.Fprintf(&y, "      - eval_time: %dm\n        alertname: BondtopImbalance\n        exp_alerts: []\n", m)
			}
			out, _ := runPromtoolTest(t, y.String())
			first, lastFired := 0, 0
			for _, m := range firedAt.FindAllStringSubmatch(out, -1) {
				if !strings.Contains(m[3], `bond="bond0"`) {
					t.Errorf("scrapes every %d s, phase %d s: fired for %s", step, phase, m[3])
				}
				d, err := time.ParseDuration(m[2])
				if err != nil {
					t.Fatal(err)
				}
				at := int(d.Minutes())
				if first == 0 {
					first = at
				} else if at != lastFired+1 {
					t.Errorf("scrapes every %d s, phase %d s: fired at %dm, not at %dm: it reset", step, phase, at, lastFired+1)
				}
				lastFired = at
			}
			switch {
			case !visible:
				blind++
				t.Logf("scrapes every %d s, phase %d s: every scrape lands on a link event of the demo, none sees the finding (fired: %v)", step, phase, first > 0)
			case first == 0:
				t.Errorf("scrapes every %d s, phase %d s: BondtopImbalance never fired in %d minutes:\n%s", step, phase, minutes, out)
			case first > 15 || lastFired != minutes:
				t.Errorf("scrapes every %d s, phase %d s: fired from %dm to %dm of %dm", step, phase, first, lastFired, minutes)
			default:
				t.Logf("scrapes every %d s, phase %d s: fires from minute %d on", step, phase, first)
			}
		}
	}
	if blind*10 > runs {
		t.Errorf("%d of %d scrape phases never see the finding for 5 minutes: the recording is not the demo's permanent imbalance", blind, runs)
	}
}
