package contrib

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/internal/testbin"
)

const grafanaFile = "grafana/bondtop.json"

type grafanaVariable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Regex      string          `json:"regex"`
	IncludeAll bool            `json:"includeAll"`
	AllValue   string          `json:"allValue"`
}

// queryText is a query variable's PromQL: {"query": "..."} or a string.
func (v grafanaVariable) queryText() string {
	var q struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(v.Query, &q) == nil && q.Query != "" {
		return q.Query
	}
	var s string
	_ = json.Unmarshal(v.Query, &s)
	return s
}

type grafanaDashboard struct {
	UID    string `json:"uid"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []grafanaVariable `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name string `json:"name"`
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
}

func readDashboard(t *testing.T) (grafanaDashboard, []byte) {
	t.Helper()
	raw, err := os.ReadFile(grafanaFile)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return d, raw
}

// variableQuery is the PromQL inside a variable's query: the selector of
// label_values(SELECTOR, LABEL), the expression of query_result(EXPR).
var variableQuery = regexp.MustCompile(`^(?:label_values\((.*),\s*\w+\)|query_result\((.*)\))$`)

// TestGrafanaProvisionsUnchanged: the dashboard goes into Grafana's file
// provisioning as it is: no import placeholder (${DS_...}, __inputs),
// every query on a data source variable the viewer picks, a job filter
// whose All matches any job, and no numeric id.
func TestGrafanaProvisionsUnchanged(t *testing.T) {
	d, raw := readDashboard(t)
	var generic map[string]any
	_ = json.Unmarshal(raw, &generic)
	if _, ok := generic["__inputs"]; ok {
		t.Error("__inputs: an import placeholder, which file provisioning does not fill")
	}
	if id, ok := generic["id"]; ok && id != nil {
		t.Errorf("id %v: provisioning assigns it", id)
	}
	if strings.Contains(string(raw), "${DS_") {
		t.Error("a ${DS_...} placeholder is left")
	}
	if d.UID == "" {
		t.Error("no uid: links to the dashboard would change with every provisioning")
	}
	vars := map[string]grafanaVariable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if ds := vars["datasource"]; ds.Type != "datasource" || strings.Trim(string(ds.Query), `"`) != "prometheus" {
		t.Errorf("no Prometheus data source variable: %+v", ds)
	}
	for _, name := range []string{"job", "instance", "bond"} {
		v, ok := vars[name]
		if !ok || !v.IncludeAll || v.AllValue == "" {
			t.Errorf("variable %s: %+v; want All with an allValue", name, v)
		}
	}
	// Every data source reference, wherever it is, is the variable.
	var walk func(any)
	walk = func(o any) {
		switch o := o.(type) {
		case map[string]any:
			for k, v := range o {
				if k == "datasource" {
					if m, ok := v.(map[string]any); !ok || m["uid"] != "${datasource}" {
						t.Errorf("a data source that is not ${datasource}: %v", v)
					}
					continue
				}
				walk(v)
			}
		case []any:
			for _, v := range o {
				walk(v)
			}
		}
	}
	walk(generic["panels"])
	walk(generic["annotations"])
	walk(generic["templating"])
	for where, q := range dashboardQueries(t, d) {
		if !strings.Contains(q, `job=~"$job"`) && !strings.HasPrefix(where, "variable job") {
			t.Errorf("%s: no job filter: %s", where, q)
		}
	}
}

// dashboardQueries returns every PromQL query of the dashboard by where
// it is.
func dashboardQueries(t *testing.T, d grafanaDashboard) map[string]string {
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
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := variableQuery.FindStringSubmatch(v.queryText())
		if m == nil {
			t.Errorf("variable %s: %q is neither label_values nor query_result", v.Name, v.queryText())
			continue
		}
		out["variable "+v.Name] = m[1] + m[2]
	}
	for _, a := range d.Annotations.List {
		out["annotation "+a.Name] = a.Expr
	}
	return out
}

// fillVariables puts values in for Grafana's variables, as a query is
// sent with All picked.
var fillVariables = strings.NewReplacer("$__rate_interval", "1m", "$job", ".+", "$instance", ".+", "$bond", ".+")

// TestGrafanaQueries: every query is PromQL that promtool accepts, and
// every metric it names is in a real scrape of the binary (the lab's
// trees, a field capture, the demo).
func TestGrafanaQueries(t *testing.T) {
	d, _ := readDashboard(t)
	queries := dashboardQueries(t, d)
	served := map[string]bool{}
	for _, f := range []string{"LACPUnpartnered", "ActiveBackupFailover", "8023ad-5.10-churned-nopartner-root", "demo"} {
		for key := range scrapeFixture(t, f) {
			name, _, _ := strings.Cut(key, "{")
			served[name] = true
		}
	}
	names := regexp.MustCompile(`\bbondtop_[a-z_]+\b`)
	var y strings.Builder
	y.WriteString("groups:\n  - name: grafana\n    rules:\n")
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
		fmt.Fprintf(&y, "      # %s\n      - record: grafana:query\n        expr: %s\n", where, strconv.Quote(fillVariables.Replace(q)))
	}
	file := filepath.Join(t.TempDir(), "grafana.rules.yml")
	writeFile(t, file, y.String())
	if out, err := exec.Command(testbin.NeedTool(t, "promtool"), "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s", err, out)
	}
}

// TestGrafanaListsDownHosts: Prometheus's own engine (promtool) runs the
// Host picker's query and the Exporters panel's 20 minutes after one of
// two exporters, under two jobs, stopped answering: the dead one is still
// offered, and shown down.
func TestGrafanaListsDownHosts(t *testing.T) {
	d, _ := readDashboard(t)
	queries := dashboardQueries(t, d)
	var picker grafanaVariable
	for _, v := range d.Templating.List {
		if v.Name == "instance" {
			picker = v
		}
	}
	extract, err := regexp.Compile(strings.Trim(picker.Regex, "/"))
	if err != nil || picker.Regex == "" {
		t.Fatalf("the Host picker's regex %q: %v", picker.Regex, err)
	}
	pick := fillVariables.Replace(queries["variable instance"])
	panel := fillVariables.Replace(queries[`panel "Exporters" query 0`])
	if panel == "" {
		t.Fatal("no Exporters panel")
	}
	body := `evaluation_interval: 15s
tests:
  - interval: 15s
    input_series:
      - series: 'up{job="bondtop",instance="LACP_slaves-2"}'
        values: '1x120'
      - series: 'bondtop_build_info{job="bondtop",instance="LACP_slaves-2",version="v1",goversion="go1.26.8"}'
        values: '1x120'
      - series: 'up{job="monitoring/bondtop",instance="LACP_slaves-4"}'
        values: '1x40 0x80'
      - series: 'bondtop_build_info{job="monitoring/bondtop",instance="LACP_slaves-4",version="v1",goversion="go1.26.8"}'
        values: '1x40 stale'
      - series: 'up{job="node",instance="LACP_slaves-4"}'
        values: '1x120'
    promql_expr_test:
      - expr: ` + strconv.Quote(pick) + `
        eval_time: 30m
        exp_samples:
          - labels: '{job="bondtop",instance="LACP_slaves-2"}'
            value: 1
          - labels: '{job="monitoring/bondtop",instance="LACP_slaves-4"}'
            value: 1
      - expr: ` + strconv.Quote(panel) + `
        eval_time: 30m
        exp_samples:
          - labels: 'up{job="bondtop",instance="LACP_slaves-2"}'
            value: 1
          - labels: 'up{job="monitoring/bondtop",instance="LACP_slaves-4"}'
            value: 0
`
	if out, ok := runPromtoolTest(t, body); !ok {
		t.Errorf("the dashboard's picker or Exporters panel lose a host that is down:\n%s", out)
	}
	for _, want := range []string{"LACP_slaves-2", "LACP_slaves-4"} {
		line := fmt.Sprintf(`{instance=%q, job="x"}`, want)
		if m := extract.FindStringSubmatch(line); m == nil || m[1] != want {
			t.Errorf("the picker's regex %s takes %v from %s", picker.Regex, m, line)
		}
	}
}
