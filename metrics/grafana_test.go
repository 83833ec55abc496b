package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
)

const grafanaFile = "../contrib/grafana/bondtop.json"

// grafanaDashboard is the part of the dashboard JSON the test reads.
type grafanaDashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	UID    string `json:"uid"`
	Panels []struct {
		Title      string `json:"title"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query struct {
				Query string `json:"query"`
			} `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name string `json:"name"`
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
}

// queries returns every PromQL query of the dashboard by where it is.
func (d *grafanaDashboard) queries(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for i, q := range p.Targets {
			out[fmt.Sprintf("panel %q query %d", p.Title, i)] = q.Expr
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.*),\s*\w+\)$`)
	for _, v := range d.Templating.List {
		m := labelValues.FindStringSubmatch(v.Query.Query)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(SELECTOR, LABEL)", v.Name, v.Query.Query)
			continue
		}
		out["variable "+v.Name] = m[1]
	}
	for _, a := range d.Annotations.List {
		out["annotation "+a.Name] = a.Expr
	}
	return out
}

// TestGrafanaDashboard: the dashboard imports with a Prometheus data
// source of the importer's choice, every query is PromQL that promtool
// accepts, and every metric it names is in a real scrape (the lab's
// real-kernel trees, a field capture, the demo).
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(grafanaFile)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if d.UID == "" || len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].PluginID != "prometheus" {
		t.Errorf("want a uid and one Prometheus input DS_PROMETHEUS: %+v", d.Inputs)
	}
	for _, p := range d.Panels {
		if p.Datasource.UID != "${DS_PROMETHEUS}" {
			t.Errorf("panel %q: data source %q, want ${DS_PROMETHEUS}", p.Title, p.Datasource.UID)
		}
	}

	served := map[string]bool{}
	for _, fixture := range []string{"LACPUnpartnered", "ActiveBackupFailover", "8023ad-5.10-churned-nopartner-root", "demo"} {
		for key := range scrapeFixture(t, fixture) {
			served[metricName(key)] = true
		}
	}
	queries := d.queries(t)
	names := regexp.MustCompile(`\bbondtop_[a-z_]+\b`)
	for where, q := range queries {
		found := names.FindAllString(q, -1)
		if len(found) == 0 {
			t.Errorf("%s: %q names no bondtop metric", where, q)
		}
		for _, n := range found {
			if !served[n] {
				t.Errorf("%s: %s is in no scrape of bondtop", where, n)
			}
		}
	}
	checkPromQL(t, queries)
}

// metricName returns the name of a series key made by seriesKey.
func metricName(key string) string {
	_, rest, _ := strings.Cut(key, model.MetricNameLabel+`="`)
	name, _, _ := strings.Cut(rest, `"`)
	return name
}

// checkPromQL has promtool parse each query, as a recording rule, with
// Grafana's variables filled in.
func checkPromQL(t *testing.T, queries map[string]string) {
	t.Helper()
	promtool := needPromtool(t)
	fill := strings.NewReplacer("$__rate_interval", "1m", "$instance", ".*", "$bond", ".*")
	var y strings.Builder
	y.WriteString("groups:\n  - name: grafana\n    rules:\n")
	for where, q := range queries {
		fmt.Fprintf(&y, "      # %s\n      - record: grafana:query\n        expr: %s\n", where, strconv.Quote(fill.Replace(q)))
	}
	file := filepath.Join(t.TempDir(), "grafana.rules.yml")
	if err := os.WriteFile(file, []byte(y.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(promtool, "check", "rules", file)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool rejects a dashboard query: %v\n%s", err, out.String())
	}
}
