package fleet

import (
	"strings"
	"testing"
	"time"
)

func TestBuildQueries(t *testing.T) {
	m, err := ParseSelector(`{job="bondtop",dc=~"fra.*"}`)
	if err != nil {
		t.Fatal(err)
	}
	q := BuildQueries(m, 2*time.Minute, time.Hour, DetailFull)
	if n := len(q.All()); n != 3 {
		t.Errorf("%d queries, want 3 whatever the fleet's size", n)
	}
	lastKnown := q.LastKnownFor([]string{"h1:9843", "h.2:9843"})
	want := map[string][]string{
		"up":         {`up{job="bondtop",dc=~"fra.*"} and on(instance, job) last_over_time(bondtop_build_info{job="bondtop",dc=~"fra.*"}[1h])`},
		"gauges":     {`{__name__=~"bondtop_bond_info|`, `|bondtop_finding|bondtop_last_sample_timestamp_seconds|`, `|bondtop_slave_lacp_port_state|`, `|bondtop_slave_lacp_churned_total",job="bondtop",dc=~"fra.*"}`},
		"last known": {`last_over_time(bondtop_slave_up{job="bondtop",dc=~"fra.*",instance=~"h1:9843|h\\.2:9843"}[1h])`, `and on(instance, job) (up{job="bondtop",dc=~"fra.*"} == 0)`},
		"rates":      {`rate(bondtop_slave_transmit_bytes_total{job="bondtop",dc=~"fra.*"}[2m])`, `"bondtop_fleet_metric", "slave_tx"`},
	}
	got := map[string]string{"up": q.Up, "gauges": q.Gauges, "last known": lastKnown, "rates": q.Rates}
	for k, subs := range want {
		for _, s := range subs {
			if !strings.Contains(got[k], s) {
				t.Errorf("%s query %s\nlacks %s", k, got[k], s)
			}
		}
	}
	// Every selector of every query carries the matchers.
	for _, q := range append(q.All(), lastKnown) {
		if n, k := strings.Count(q, "{"), strings.Count(q, `job="bondtop",dc=~"fra.*"`); n != k {
			t.Errorf("%d selectors, %d scoped: %s", n, k, q)
		}
	}
	// Without detail: no per-slave series.
	list := BuildQueries(m, time.Minute, time.Hour, DetailList)
	for _, q := range append(list.All(), list.LastKnownFor([]string{"h1"})) {
		for _, s := range []string{"slave_up", "slave_active", "slave_speed", "slave_transmit", "slave_receive", "aggregator", "lacp_"} {
			if strings.Contains(q, s) {
				t.Errorf("without detail, %s asks for %s", q, s)
			}
		}
	}
	// No selector: bare metric names.
	if q := BuildQueries(nil, time.Minute, time.Hour, DetailList); !strings.HasPrefix(q.Up, "up and on(instance, job) last_over_time(bondtop_build_info[1h])") {
		t.Errorf("unscoped up query: %s", q.Up)
	}
}
