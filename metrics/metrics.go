// Package metrics exposes bondtop's snapshots as Prometheus metrics, so a
// fleet of hosts is watched by scraping each one's /metrics. It owns the
// metric names and labels (an interface, like the JSON keys) and turns the
// latest collector.Snapshot into them at scrape time.
//
// Kernel counters are exported as _total counters, not rates: Prometheus
// computes rates itself, over whatever window the query asks for.
package metrics

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
)

const namespace = "bondtop"

// Exporter serves the most recent snapshot. Update is called by the
// sampler's consumer, Collect by the HTTP server's goroutines; the snapshot
// is immutable, so an atomic pointer is all the locking needed.
type Exporter struct {
	latest atomic.Pointer[collector.Snapshot]
	// failing is set while reads of the source fail; readErrors counts
	// every failed read.
	failing    atomic.Bool
	readErrors atomic.Uint64
	reg        *prometheus.Registry
	version    string
	health     health
}

// New returns an Exporter registered in a registry of its own, with the
// Go runtime and process collectors beside it.
func New(opts ...Option) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), version: "(devel)"}
	for _, o := range opts {
		o(e)
	}
	e.reg.MustRegister(e, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return e
}

// Update makes snap the one the next scrape reports.
func (e *Exporter) Update(snap *collector.Snapshot) {
	e.health.sampled(snap)
	e.latest.Store(snap)
	e.failing.Store(false)
}

// ReadFailed notes a failed read of the source. Until a read succeeds
// again, scrapes say so (bondtop_read_success 0) and carry no bond
// metrics: the last good ones would be stale values passed off as now.
func (e *Exporter) ReadFailed() {
	e.readErrors.Add(1)
	e.health.failed()
	e.failing.Store(true)
}

// Handler serves /metrics.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Describe implements prometheus.Collector. The exporter's metrics are
// "unchecked": the set of label values changes as slaves come and go.
func (e *Exporter) Describe(chan<- *prometheus.Desc) {}

var (
	bondLabels  = []string{"bond"}
	slaveLabels = []string{"bond", "slave"}

	descBondInfo = prometheus.NewDesc(namespace+"_bond_info",
		"A bond's configuration as labels; always 1.", []string{"bond", "mode", "xmit_hash_policy", "lacp_rate", "ad_select"}, nil)
	descBondUp = prometheus.NewDesc(namespace+"_bond_up",
		"1 when the bond's MII status is up.", bondLabels, nil)
	descBondSlaves = prometheus.NewDesc(namespace+"_bond_slaves",
		"Slaves enslaved to the bond.", bondLabels, nil)
	descBondSlavesUp = prometheus.NewDesc(namespace+"_bond_slaves_up",
		"Slaves whose MII status is up.", bondLabels, nil)
	descBondAggregator = prometheus.NewDesc(namespace+"_bond_active_aggregator_id",
		"802.3ad: the active aggregator's id.", bondLabels, nil)
	descBondNumPorts = prometheus.NewDesc(namespace+"_bond_active_aggregator_ports",
		"802.3ad: ports in the active aggregator.", bondLabels, nil)
	descBondNoAggregator = prometheus.NewDesc(namespace+"_bond_no_active_aggregator",
		"802.3ad: 1 when the bond has no active aggregator (it sends nothing).", bondLabels, nil)
	descBondPresent = prometheus.NewDesc(namespace+"_bond_present",
		"1 for a bond that exists; 0 for a followed bond that vanished.", bondLabels, nil)

	descReadSuccess = prometheus.NewDesc(namespace+"_read_success",
		"1 when the latest read of the host (or --root tree) succeeded; 0 when it failed, and then no bond metrics are served.", nil, nil)
	descReadErrors = prometheus.NewDesc(namespace+"_read_errors_total",
		"Reads of the host (or --root tree) that failed.", nil, nil)

	descSlaveUp = prometheus.NewDesc(namespace+"_slave_up",
		"1 when the slave's MII status is up.", slaveLabels, nil)
	descSlaveActive = prometheus.NewDesc(namespace+"_slave_active",
		"1 when the bond uses the slave (state active), 0 when it is a backup.", slaveLabels, nil)
	descSlaveSpeed = prometheus.NewDesc(namespace+"_slave_speed_bytes",
		"The slave's link speed in bytes per second.", slaveLabels, nil)
	descSlaveFailures = prometheus.NewDesc(namespace+"_slave_link_failures_total",
		"The bonding driver's link failure count of the slave.", slaveLabels, nil)
	descSlaveAggregator = prometheus.NewDesc(namespace+"_slave_aggregator_id",
		"802.3ad: the aggregator the slave is in.", slaveLabels, nil)
	descSlaveInActiveAgg = prometheus.NewDesc(namespace+"_slave_in_active_aggregator",
		"802.3ad: 1 when the slave is in the bond's active aggregator (it can carry traffic).", slaveLabels, nil)
	descSlavePortState = prometheus.NewDesc(namespace+"_slave_lacp_port_state",
		"802.3ad: the LACP port state byte (63 = healthy with fast LACP, 61 slow).", []string{"bond", "slave", "side"}, nil)
	descSlaveChurned = prometheus.NewDesc(namespace+"_slave_lacp_churned_total",
		"802.3ad: times the actor or partner churned on the slave.", []string{"bond", "slave", "side"}, nil)
	descSlavePartner = prometheus.NewDesc(namespace+"_slave_lacp_partner_info",
		"802.3ad: the LACP partner the slave hears, as labels; always 1.", []string{"bond", "slave", "partner_mac", "partner_key", "partner_port"}, nil)
)

// counterMetric names one kernel counter in Prometheus terms.
type counterMetric struct {
	counter bonding.Counter
	name    string
	help    string
}

var counterMetrics = []counterMetric{
	{bonding.RxBytes, "receive_bytes_total", "Bytes received."},
	{bonding.TxBytes, "transmit_bytes_total", "Bytes transmitted."},
	{bonding.RxPackets, "receive_packets_total", "Packets received."},
	{bonding.TxPackets, "transmit_packets_total", "Packets transmitted."},
	{bonding.RxErrors, "receive_errors_total", "Receive errors."},
	{bonding.TxErrors, "transmit_errors_total", "Transmit errors."},
	{bonding.RxDropped, "receive_dropped_total", "Received packets dropped."},
	{bonding.TxDropped, "transmit_dropped_total", "Transmitted packets dropped."},
	{bonding.RxOverErrors, "receive_overrun_errors_total", "Receive ring overruns (rx_over_errors)."},
	{bonding.RxFifoErrors, "receive_fifo_errors_total", "Receive FIFO errors (rx_fifo_errors)."},
}

// counterDescs are the descriptors of counterMetrics for bonds and slaves.
var bondCounterDescs, slaveCounterDescs = func() ([]*prometheus.Desc, []*prometheus.Desc) {
	var b, s []*prometheus.Desc
	for _, m := range counterMetrics {
		b = append(b, prometheus.NewDesc(namespace+"_bond_"+m.name, "The bond device's own counter: "+m.help, bondLabels, nil))
		s = append(s, prometheus.NewDesc(namespace+"_slave_"+m.name, m.help, slaveLabels, nil))
	}
	return b, s
}()

// Collect implements prometheus.Collector.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	snap := e.latest.Load()
	failing := e.failing.Load()
	e.collectHealth(ch)
	if snap == nil && !failing {
		return
	}
	ch <- gauge(descReadSuccess, boolValue(!failing))
	ch <- counter(descReadErrors, float64(e.readErrors.Load()))
	if failing {
		return
	}
	e.collectPresence(ch, snap)
	for i := range snap.Bonds {
		collectBond(ch, &snap.Bonds[i])
	}
	collectTraffic(ch, snap)
}

func collectBond(ch chan<- prometheus.Metric, b *collector.BondSample) {
	ch <- gauge(descBondPresent, 1, b.Name)
	rate, adSelect := "", ""
	if b.LACP != nil {
		rate, adSelect = str(b.LACP.Rate), str(b.LACP.ADSelect)
	}
	ch <- gauge(descBondInfo, 1, b.Name, str(b.Mode), str(b.XmitHashPolicy), rate, adSelect)
	if b.MIIStatus != nil {
		ch <- gauge(descBondUp, boolValue(*b.MIIStatus == "up"), b.Name)
	}
	up := 0
	for i := range b.Slaves {
		if str(b.Slaves[i].MIIStatus) == "up" {
			up++
		}
	}
	ch <- gauge(descBondSlaves, float64(len(b.Slaves)), b.Name)
	ch <- gauge(descBondSlavesUp, float64(up), b.Name)
	if l := b.LACP; l != nil {
		ch <- gauge(descBondNoAggregator, boolValue(l.NoActiveAggregator), b.Name)
		if l.AggregatorID != nil {
			ch <- gauge(descBondAggregator, float64(*l.AggregatorID), b.Name)
		}
		if l.NumPorts != nil {
			ch <- gauge(descBondNumPorts, float64(*l.NumPorts), b.Name)
		}
	}
	counters(ch, bondCounterDescs, &b.Totals, b.Name)
	collectSettings(ch, b)
	collectFindings(ch, b)
	for i := range b.Slaves {
		collectSlave(ch, b, &b.Slaves[i])
	}
}

func collectSlave(ch chan<- prometheus.Metric, b *collector.BondSample, s *collector.SlaveSample) {
	l := []string{b.Name, s.Name}
	if s.MIIStatus != nil {
		ch <- gauge(descSlaveUp, boolValue(*s.MIIStatus == "up"), l...)
	}
	if s.State != nil {
		ch <- gauge(descSlaveActive, boolValue(*s.State == "active"), l...)
	}
	if s.SpeedMbps != nil {
		ch <- gauge(descSlaveSpeed, float64(*s.SpeedMbps)*1e6/8, l...)
	}
	if s.LinkFailureCount != nil {
		ch <- counter(descSlaveFailures, float64(*s.LinkFailureCount), l...)
	}
	if s.AggregatorID != nil {
		ch <- gauge(descSlaveAggregator, float64(*s.AggregatorID), l...)
		if b.LACP != nil && b.LACP.AggregatorID != nil {
			ch <- gauge(descSlaveInActiveAgg, boolValue(*s.AggregatorID == *b.LACP.AggregatorID), l...)
		}
	}
	if s.Actor != nil && s.Actor.PortState != nil {
		ch <- gauge(descSlavePortState, float64(*s.Actor.PortState), b.Name, s.Name, "actor")
	}
	if s.Partner != nil {
		if s.Partner.PortState != nil {
			ch <- gauge(descSlavePortState, float64(*s.Partner.PortState), b.Name, s.Name, "partner")
		}
		if s.Partner.SystemMAC != nil {
			ch <- gauge(descSlavePartner, 1, b.Name, s.Name, *s.Partner.SystemMAC, intLabel(s.Partner.Key), intLabel(s.Partner.PortNumber))
		}
	}
	if s.ActorChurnedCount != nil {
		ch <- counter(descSlaveChurned, float64(*s.ActorChurnedCount), b.Name, s.Name, "actor")
	}
	if s.PartnerChurnedCount != nil {
		ch <- counter(descSlaveChurned, float64(*s.PartnerChurnedCount), b.Name, s.Name, "partner")
	}
	counters(ch, slaveCounterDescs, &s.Totals, l...)
	collectSwitchSide(ch, b, s)
	collectPhysical(ch, b, s)
}

// counters emits the kernel counters the source could read.
func counters(ch chan<- prometheus.Metric, descs []*prometheus.Desc, t *collector.Totals, labels ...string) {
	values := [...]*uint64{t.RxBytes, t.TxBytes, t.RxPackets, t.TxPackets, t.RxErrors, t.TxErrors, t.RxDropped, t.TxDropped, t.RxOverErrors, t.RxFifoErrors}
	for i, m := range counterMetrics {
		if v := values[m.counter]; v != nil {
			ch <- counter(descs[i], float64(*v), labels...)
		}
	}
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, validLabels(labels)...)
}

func counter(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, validLabels(labels)...)
}

// validLabels replaces bytes that are not UTF-8 in label values with
// U+FFFD. Linux takes any bytes as an interface name, and a --root tree
// may hold anything; Prometheus takes only UTF-8, and one invalid value
// would otherwise cost the whole scrape.
func validLabels(labels []string) []string {
	out := labels
	for i, l := range labels {
		if !utf8.ValidString(l) {
			if &out[0] == &labels[0] {
				out = slices.Clone(labels) // the caller's slice stays as it was
			}
			out[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
	}
	return out
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func intLabel(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}
