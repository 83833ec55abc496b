package metrics

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/diagnose"
)

// The shipped alert rules, and their promtool tests. The tests' input
// series are series of real scrapes: each names in its instance label the
// fixture it was scraped from, a tree of testdata/lab or a field capture
// of bonding/testdata/proc, and starts with the value the scrape gave;
// what follows is the story the case tells (a link lost, a flap).
const (
	rulesFile     = "../contrib/prometheus/bondtop.rules.yml"
	rulesTestFile = "../contrib/prometheus/bondtop.rules.test.yml"
)

// fieldCaptures are the field captures (one bond's /proc/net/bonding file
// each) the rule tests use, by instance name.
var fieldCaptures = []string{
	"8023ad-5.10-churned-nopartner-root",
	"8023ad-5.14-el9-nonroot",
	"8023ad-6.8-healthy-root",
	"activebackup-6.8-primary-reselect",
}

// fixtureRoot returns a --root tree for the fixture called name: a lab
// tree as it is, or a field capture placed as /proc/net/bonding/bond0.
func fixtureRoot(t *testing.T, name string) string {
	t.Helper()
	if dir := filepath.Join("../testdata/lab", name); isDir(dir) {
		return dir
	}
	capture, err := os.ReadFile(filepath.Join("../bonding/testdata/proc", name+".txt"))
	if err != nil {
		t.Fatalf("fixture %s: neither a lab tree nor a field capture: %v", name, err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "proc/net/bonding")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bond0"), capture, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// scrapeFixture samples the fixture as `bondtop --root` does and returns
// its scrape as series (name{labels} without instance and job) to values.
func scrapeFixture(t *testing.T, name string) map[string]float64 {
	t.Helper()
	now := time.Unix(1_700_000_100, 0) // a whole five minutes: the demo script's start
	clock := func() time.Time { return now }
	// Two samples: rates need two. The demo host is the one fixture
	// whose counters move, and the only one that shows an imbalance:
	// it is sampled through its first 20 s, when the imbalance shows.
	var src collector.Source
	samples := 2
	if name == "demo" {
		src, samples = collector.NewDemoSource(clock), 21
	} else {
		rs, err := collector.NewRootSource(fixtureRoot(t, name))
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		src = rs
	}
	s := collector.NewSampler(src, collector.Options{Clock: clock, Analyze: diagnose.NewWindow(0).Fill})
	e := New(Version("test"))
	for range samples {
		snap, err := s.Sample()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e.Update(snap)
		now = now.Add(time.Second)
	}
	fams := scrape(t, e)
	out := make(map[string]float64)
	for fname, f := range fams {
		for _, m := range f.Metric {
			labels := model.LabelSet{model.MetricNameLabel: model.LabelValue(fname)}
			for _, lp := range m.Label {
				labels[model.LabelName(lp.GetName())] = model.LabelValue(lp.GetValue())
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.Counter.GetValue()
			}
			out[seriesKey(labels)] = v
		}
	}
	return out
}

// seriesKey is a canonical name{a="x",b="y"} for a label set.
func seriesKey(ls model.LabelSet) string {
	return ls.String()
}

// TestDumpFixtureSeries prints the fixtures' scrapes in the test file's
// notation, for writing new cases: BONDTOP_DUMP=LACPUnpartnered go test
// -run DumpFixture -v ./metrics/
func TestDumpFixtureSeries(t *testing.T) {
	name := os.Getenv("BONDTOP_DUMP")
	if name == "" {
		t.Skip("BONDTOP_DUMP names the fixture to print")
	}
	series := scrapeFixture(t, name)
	keys := make([]string, 0, len(series))
	for k := range series {
		if strings.HasPrefix(k, "go_") || strings.HasPrefix(k, "process_") || strings.HasPrefix(k, "promhttp_") {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%s %s\n", k, strconv.FormatFloat(series[k], 'g', -1, 64))
	}
}

// rulesTest is the part of promtool's test file this test reads.
type rulesTest struct {
	Tests []struct {
		InputSeries []struct {
			Series string `yaml:"series"`
			Values string `yaml:"values"`
		} `yaml:"input_series"`
	} `yaml:"tests"`
}

// TestRuleInputsAreRealScrapes: every input series of the rule tests is a
// series that bondtop serves for the fixture its instance label names,
// and starts at the value it serves (up, the one series Prometheus makes
// itself, is left out).
func TestRuleInputsAreRealScrapes(t *testing.T) {
	raw, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var rt rulesTest
	if err := yaml.Unmarshal(raw, &rt); err != nil {
		t.Fatal(err)
	}
	scrapes := make(map[string]map[string]float64)
	checked := 0
	for _, tc := range rt.Tests {
		for _, in := range tc.InputSeries {
			ls, err := parseSeries(in.Series)
			if err != nil {
				t.Fatalf("%s: %v", in.Series, err)
			}
			if ls[model.MetricNameLabel] == "up" {
				continue
			}
			instance := string(ls["instance"])
			if instance == "" || ls["job"] != "bondtop" {
				t.Errorf("%s: want job=\"bondtop\" and the fixture as instance", in.Series)
				continue
			}
			if scrapes[instance] == nil {
				scrapes[instance] = scrapeFixture(t, instance)
			}
			delete(ls, "instance")
			delete(ls, "job")
			got, ok := scrapes[instance][seriesKey(ls)]
			if !ok {
				t.Errorf("%s: bondtop serves no such series for %s", in.Series, instance)
				continue
			}
			first := strings.Fields(in.Values)[0]
			first, _, _ = strings.Cut(first, "+")
			first, _, _ = strings.Cut(first, "x")
			if want, err := strconv.ParseFloat(first, 64); err != nil || want != got {
				t.Errorf("%s starts at %q; the scrape of %s serves %v", in.Series, first, instance, got)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no input series checked")
	}
	for _, name := range fieldCaptures {
		if scrapes[name] == nil {
			t.Errorf("no rule test uses the field capture %s", name)
		}
	}
}

// parseSeries reads promtool's series notation, name{a="x",...}.
func parseSeries(s string) (model.LabelSet, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(s + " 0\n"))
	if err != nil {
		return nil, err
	}
	for name, f := range fams {
		ls := model.LabelSet{model.MetricNameLabel: model.LabelValue(name)}
		for _, lp := range f.Metric[0].Label {
			ls[model.LabelName(lp.GetName())] = model.LabelValue(lp.GetValue())
		}
		return ls, nil
	}
	return nil, fmt.Errorf("no series")
}

// TestPromtoolRules runs Debian's promtool on the shipped rules: they
// parse, and every case of the test file passes.
func TestPromtoolRules(t *testing.T) {
	promtool := needPromtool(t)
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", rulesTestFile}} {
		var out bytes.Buffer
		cmd := exec.Command(promtool, args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out.String())
		} else {
			t.Logf("promtool %s:\n%s", strings.Join(args, " "), out.String())
		}
	}
}

// TestEveryAlertIsTested: each shipped alert says what to check first
// (summary and description), and some case of the test file expects it
// to fire, and some case expects it silent.
func TestEveryAlertIsTested(t *testing.T) {
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	for file, into := range map[string]any{rulesFile: &rules, rulesTestFile: &tests} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(raw, into); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	want := []string{"BondtopDown", "BondtopBlind", "BondtopSlaveDown", "BondtopSlaveFlapping", "BondtopLACPNotAggregating", "BondtopDegraded", "BondtopImbalance"}
	var got []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			got = append(got, r.Alert)
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: needs a summary and a description", r.Alert)
			}
			if !fires[r.Alert] || !silent[r.Alert] {
				t.Errorf("%s: tested firing %v, silent %v; want both", r.Alert, fires[r.Alert], silent[r.Alert])
			}
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("alerts %v, want %v", got, want)
	}
}
