package fleet

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// tagLabel names, in the answers of queries that join several metrics
// with `or`, which metric a series came from: PromQL's `or` matches
// series on their labels without the metric name, and functions such as
// rate() drop the name anyway.
const tagLabel = "bondtop_fleet_metric"

// gaugeMetrics are the bondtop gauges the list reads, in one query.
var gaugeMetrics = []string{
	"bondtop_bond_info", "bondtop_bond_up", "bondtop_bond_slaves", "bondtop_bond_slaves_up",
	"bondtop_slave_up", "bondtop_slave_active", "bondtop_slave_speed_bytes", "bondtop_finding",
	"bondtop_last_sample_timestamp_seconds",
	// The LACP panel's: aggregators, port states, partners, churn.
	"bondtop_bond_active_aggregator_id", "bondtop_bond_active_aggregator_ports", "bondtop_bond_no_active_aggregator",
	"bondtop_slave_aggregator_id", "bondtop_slave_lacp_port_state", "bondtop_slave_lacp_partner_info",
	"bondtop_slave_lacp_churned_total",
}

// lastKnownMetrics are the gauges whose last value is shown for a host
// whose exporter is down: what its bonds were, never findings or rates.
var lastKnownMetrics = []string{
	"bondtop_bond_info", "bondtop_bond_up", "bondtop_bond_slaves", "bondtop_bond_slaves_up",
	"bondtop_slave_up", "bondtop_slave_active", "bondtop_slave_speed_bytes",
	"bondtop_last_sample_timestamp_seconds",
}

// rateMetrics are the byte counters whose rate() the list shows, each
// with the tag it carries in the answer.
var rateMetrics = []struct{ metric, tag string }{
	{"bondtop_bond_transmit_bytes_total", "bond_tx"},
	{"bondtop_bond_receive_bytes_total", "bond_rx"},
	{"bondtop_slave_transmit_bytes_total", "slave_tx"},
	{"bondtop_slave_receive_bytes_total", "slave_rx"},
}

// Queries are the instant queries of one refresh of the list: three,
// and a fourth when a target is down, however many hosts and bonds
// Prometheus holds.
type Queries struct {
	// Up: the up series of every target that serves bondtop metrics
	// (it did within the lookback, or its job has a target that does).
	// It is asked first: the fourth query depends on its answer.
	Up string
	// Gauges: the bondtop gauges as of now, with their metric names.
	Gauges string
	// Rates: bytes per second over the rate window, tagged.
	Rates string
	// lastKnown are the parts of LastKnownFor's query, each with the
	// selector of one gauge still open for the instances' matcher.
	lastKnown []lastKnownPart
	match     []Matcher
}

// lastKnownPart is one gauge of the LastKnown query.
type lastKnownPart struct{ metric, lookback string }

// slaveDetail are the series only the detailed read asks for: the table
// counts the slaves from the bond's own gauges and shows no LACP detail.
var slaveDetail = map[string]bool{
	"bondtop_slave_up": true, "bondtop_slave_active": true, "bondtop_slave_speed_bytes": true,
	"bondtop_slave_transmit_bytes_total": true, "bondtop_slave_receive_bytes_total": true,
	"bondtop_bond_active_aggregator_id": true, "bondtop_bond_active_aggregator_ports": true,
	"bondtop_bond_no_active_aggregator": true, "bondtop_slave_aggregator_id": true,
	"bondtop_slave_lacp_port_state": true, "bondtop_slave_lacp_partner_info": true,
	"bondtop_slave_lacp_churned_total": true,
}

// Detail is how much of each bond a read asks for.
type Detail int

const (
	// DetailList asks for what the table shows: the bond's own series.
	DetailList Detail = iota
	// DetailLinks asks also for each slave's MII status and role: the
	// dashboard's bond list counts the slaves up and names them, and a
	// bond's active slave is known whether or not it is on screen (else
	// opening a bond would read as a failover from none).
	DetailLinks
	// DetailFull asks for everything the JSON and a bond's dashboard
	// show: each slave's state, speed, rates and LACP series (about
	// three times the list's series).
	DetailFull
)

// BuildQueries writes the queries for the selector's matchers, asking
// for detail of each bond.
func BuildQueries(match []Matcher, rateWindow, lookback time.Duration, detail Detail) Queries {
	keep := func(m string) bool {
		return detail == DetailFull || !slaveDetail[m] || detail == DetailLinks && (m == "bondtop_slave_up" || m == "bondtop_slave_active")
	}
	rw, lb := model.Duration(rateWindow).String(), model.Duration(lookback).String()
	var q Queries
	q.Up = sel("up", match) + " and on(instance, job) last_over_time(" + sel("bondtop_build_info", match) + "[" + lb + "])" +
		" or " + sel("up", match) + " and on(job) group by (job) (" + sel("bondtop_build_info", match) + ")"
	var names []string
	for _, m := range gaugeMetrics {
		if keep(m) {
			names = append(names, m)
		}
	}
	q.Gauges = selName(`__name__=~"`+strings.Join(names, "|")+`"`, match)
	q.match = match
	for _, m := range lastKnownMetrics {
		if keep(m) {
			q.lastKnown = append(q.lastKnown, lastKnownPart{m, lb})
		}
	}
	var parts []string
	for _, m := range rateMetrics {
		if !keep(m.metric) {
			continue
		}
		parts = append(parts, tag("rate("+sel(m.metric, match)+"["+rw+"])", m.tag))
	}
	q.Rates = strings.Join(parts, " or ")
	return q
}

// All lists the queries a refresh sends when every target is up, in
// the order Read sends them.
func (q Queries) All() []string { return []string{q.Up, q.Gauges, q.Rates} }

// LastKnownFor is the query for the gauges' last values within the
// lookback, each tagged with its metric's name, of the targets that are
// down now on these instances. Its selectors name the instances: a
// last_over_time over an hour of every bond's series would cost
// Prometheus a second at 10 000 bonds to find the few that are down
// (docs/fleet.md, "Cost").
func (q Queries) LastKnownFor(instances []string) string {
	alt := make([]string, len(instances))
	for i, inst := range instances {
		alt[i] = regexp.QuoteMeta(inst)
	}
	match := append(slices.Clip(q.match), Matcher{Name: "instance", Op: "=~", Value: strings.Join(alt, "|")})
	parts := make([]string, len(q.lastKnown))
	for i, p := range q.lastKnown {
		parts[i] = tag("last_over_time("+sel(p.metric, match)+"["+p.lookback+"])", p.metric)
	}
	return "(" + strings.Join(parts, " or ") + ") and on(instance, job) (" + sel("up", q.match) + " == 0)"
}

func tag(expr, value string) string {
	return `label_replace(` + expr + `, "` + tagLabel + `", "` + value + `", "", "")`
}

// sel is metric{matchers}.
func sel(metric string, match []Matcher) string {
	if len(match) == 0 {
		return metric
	}
	return metric + selName("", match)
}

// selName is {first, matchers...}, first left out when empty.
func selName(first string, match []Matcher) string {
	var b strings.Builder
	b.WriteByte('{')
	if first != "" {
		b.WriteString(first)
	}
	for i, m := range match {
		if i > 0 || first != "" {
			b.WriteByte(',')
		}
		b.WriteString(m.String())
	}
	b.WriteByte('}')
	return b.String()
}
