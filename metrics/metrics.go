// Package metrics exposes bondtop's snapshots as Prometheus metrics, so a
// fleet of hosts is watched by scraping each one's /metrics. It owns the
// metric names and labels (an interface, like the JSON keys) and turns the
// latest model.Snapshot into const metrics of the Prometheus Go client
// at scrape time, as node_exporter's collectors do, beside the client's
// own go_* and process_* collectors; promhttp serves them (gzip, the
// OpenMetrics format when the scraper asks for it).
//
// Kernel counters are exported as _total counters, not rates: Prometheus
// computes rates itself, over whatever window the query asks for. They
// are read when Prometheus scrapes (see Exporter.Fresh), not at bondtop's
// own pace.
package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

const namespace = "bondtop"

// Exporter serves the most recent snapshot. Update is called by the
// sampler's consumer, collect by the HTTP server's goroutines; the snapshot
// is immutable, so an atomic pointer is all the locking needed.
type Exporter struct {
	latest atomic.Pointer[model.Snapshot]
	// failing is set while reads of the source fail; readErrors counts
	// every failed read.
	failing    atomic.Bool
	readErrors atomic.Uint64
	version    string
	health     health

	// mu guards the fresh-read handshake (handler.go): updatedAt is when
	// the latest snapshot arrived, updated is closed (and replaced) by the
	// next Update, wake asks the Sampler for a snapshot now.
	mu        sync.Mutex
	updatedAt time.Time
	updated   chan struct{}
	wake      chan struct{}
}

// New returns an Exporter with nothing to report yet but itself: its
// build, its sample errors, the Go runtime's and the process's metrics.
func New(opts ...Option) *Exporter {
	e := &Exporter{version: "(devel)"}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Update makes snap the one the next scrape reports.
func (e *Exporter) Update(snap *model.Snapshot) {
	e.health.sampled(snap)
	e.latest.Store(snap)
	e.failing.Store(false)
	e.mu.Lock()
	e.updatedAt = time.Now()
	if e.updated != nil {
		close(e.updated)
		e.updated = nil
	}
	e.mu.Unlock()
}

// ReadFailed notes a failed read of the source. Until a read succeeds
// again, scrapes say so (bondtop_read_success 0) and carry no bond
// metrics: the last good ones would be stale values passed off as now.
func (e *Exporter) ReadFailed() {
	e.readErrors.Add(1)
	e.health.failed()
	e.failing.Store(true)
	e.mu.Lock()
	if e.updated != nil {
		close(e.updated)
		e.updated = nil
	}
	e.mu.Unlock()
}

var (
	bondLabels  = []string{"bond"}
	slaveLabels = []string{"bond", "slave"}

	descBondInfo = newDesc(namespace+"_bond_info",
		"A bond's configuration as labels; always 1.", gauge, "bond", "mode", "xmit_hash_policy", "lacp_rate", "ad_select")
	descBondUp = newDesc(namespace+"_bond_up",
		"1 when the bond's MII status is up.", gauge, bondLabels...)
	descBondSlaves = newDesc(namespace+"_bond_slaves",
		"Slaves enslaved to the bond.", gauge, bondLabels...)
	descBondSlavesUp = newDesc(namespace+"_bond_slaves_up",
		"Slaves whose MII status is up.", gauge, bondLabels...)
	descBondAggregator = newDesc(namespace+"_bond_active_aggregator_id",
		"802.3ad: the active aggregator's id.", gauge, bondLabels...)
	descBondNumPorts = newDesc(namespace+"_bond_active_aggregator_ports",
		"802.3ad: ports in the active aggregator.", gauge, bondLabels...)
	descBondNoAggregator = newDesc(namespace+"_bond_no_active_aggregator",
		"802.3ad: 1 when the bond has no active aggregator (it sends nothing).", gauge, bondLabels...)
	descBondPresent = newDesc(namespace+"_bond_present",
		"1 for a bond that exists; 0 for a followed bond that vanished.", gauge, bondLabels...)

	descReadSuccess = newDesc(namespace+"_read_success",
		"1 when the latest read of the host (or --root tree) succeeded; 0 when it failed, and then no bond metrics are served.", gauge)
	descReadErrors = newDesc(namespace+"_read_errors_total",
		"Reads of the host (or --root tree) that failed.", counter)

	descSlaveUp = newDesc(namespace+"_slave_up",
		"1 when the slave's MII status is up.", gauge, slaveLabels...)
	descSlaveActive = newDesc(namespace+"_slave_active",
		"1 when the bond uses the slave (state active), 0 when it is a backup.", gauge, slaveLabels...)
	descSlaveSpeed = newDesc(namespace+"_slave_speed_bytes",
		"The slave's link speed in bytes per second.", gauge, slaveLabels...)
	descSlaveFailures = newDesc(namespace+"_slave_link_failures_total",
		"The bonding driver's link failure count of the slave.", counter, slaveLabels...)
	descSlaveAggregator = newDesc(namespace+"_slave_aggregator_id",
		"802.3ad: the aggregator the slave is in.", gauge, slaveLabels...)
	descSlaveInActiveAgg = newDesc(namespace+"_slave_in_active_aggregator",
		"802.3ad: 1 when the slave is in the bond's active aggregator (it can carry traffic).", gauge, slaveLabels...)
	descSlavePortState = newDesc(namespace+"_slave_lacp_port_state",
		"802.3ad: the LACP port state byte (63 = healthy with fast LACP, 61 slow).", gauge, "bond", "slave", "side")
	descSlaveChurned = newDesc(namespace+"_slave_lacp_churned_total",
		"802.3ad: times the actor or partner churned on the slave.", counter, "bond", "slave", "side")
	descSlavePartner = newDesc(namespace+"_slave_lacp_partner_info",
		"802.3ad: the LACP partner the slave hears, as labels; always 1.", gauge, "bond", "slave", "partner_mac", "partner_key", "partner_port")
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
var bondCounterDescs, slaveCounterDescs = func() ([]*desc, []*desc) {
	var b, s []*desc
	for _, m := range counterMetrics {
		b = append(b, newDesc(namespace+"_bond_"+m.name, "The bond device's own counter: "+m.help, counter, bondLabels...))
		s = append(s, newDesc(namespace+"_slave_"+m.name, m.help, counter, slaveLabels...))
	}
	return b, s
}()

// Describe sends every family bondtop declares (prometheus.Collector).
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descs {
		ch <- d.d
	}
}

// Collect sends the metrics of the latest snapshot (prometheus.Collector).
// Those about bondtop itself come first: they are served also before the
// first sample and while reads fail.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	out := batch{ch}
	snap := e.latest.Load()
	failing := e.failing.Load()
	e.collectHealth(out)
	if snap == nil && !failing {
		return
	}
	out.Add(descReadSuccess, boolValue(!failing))
	out.Add(descReadErrors, float64(e.readErrors.Load()))
	if failing {
		return
	}
	e.collectPresence(out, snap)
	for i := range snap.Bonds {
		collectBond(out, &snap.Bonds[i])
	}
	collectTraffic(out, snap)
}

func collectBond(out batch, b *model.BondSample) {
	out.Add(descBondPresent, 1, b.Name)
	rate, adSelect := "", ""
	if b.LACP != nil {
		rate, adSelect = str(b.LACP.Rate), str(b.LACP.ADSelect)
	}
	out.Add(descBondInfo, 1, b.Name, str(b.Mode), str(b.XmitHashPolicy), rate, adSelect)
	if b.MIIStatus != nil {
		out.Add(descBondUp, boolValue(*b.MIIStatus == "up"), b.Name)
	}
	up := 0
	for i := range b.Slaves {
		if str(b.Slaves[i].MIIStatus) == "up" {
			up++
		}
	}
	out.Add(descBondSlaves, float64(len(b.Slaves)), b.Name)
	out.Add(descBondSlavesUp, float64(up), b.Name)
	if l := b.LACP; l != nil {
		out.Add(descBondNoAggregator, boolValue(l.NoActiveAggregator), b.Name)
		if l.AggregatorID != nil {
			out.Add(descBondAggregator, float64(*l.AggregatorID), b.Name)
		}
		if l.NumPorts != nil {
			out.Add(descBondNumPorts, float64(*l.NumPorts), b.Name)
		}
	}
	counters(out, bondCounterDescs, &b.Totals, b.Name)
	collectSettings(out, b)
	collectFindings(out, b)
	for i := range b.Slaves {
		collectSlave(out, b, &b.Slaves[i])
	}
}

func collectSlave(out batch, b *model.BondSample, s *model.SlaveSample) {
	l := []string{b.Name, s.Name}
	if s.MIIStatus != nil {
		out.Add(descSlaveUp, boolValue(*s.MIIStatus == "up"), l...)
	}
	if s.State != nil {
		out.Add(descSlaveActive, boolValue(*s.State == "active"), l...)
	}
	if s.SpeedMbps != nil {
		out.Add(descSlaveSpeed, float64(*s.SpeedMbps)*1e6/8, l...)
	}
	if s.LinkFailureCount != nil {
		out.Add(descSlaveFailures, float64(*s.LinkFailureCount), l...)
	}
	if s.AggregatorID != nil {
		out.Add(descSlaveAggregator, float64(*s.AggregatorID), l...)
		if b.LACP != nil && b.LACP.AggregatorID != nil {
			out.Add(descSlaveInActiveAgg, boolValue(*s.AggregatorID == *b.LACP.AggregatorID), l...)
		}
	}
	if s.Actor != nil && s.Actor.PortState != nil {
		out.Add(descSlavePortState, float64(*s.Actor.PortState), b.Name, s.Name, "actor")
	}
	if s.Partner != nil {
		if s.Partner.PortState != nil {
			out.Add(descSlavePortState, float64(*s.Partner.PortState), b.Name, s.Name, "partner")
		}
		if s.Partner.SystemMAC != nil {
			out.Add(descSlavePartner, 1, b.Name, s.Name, *s.Partner.SystemMAC, intLabel(s.Partner.Key), intLabel(s.Partner.PortNumber))
		}
	}
	if s.ActorChurnedCount != nil {
		out.Add(descSlaveChurned, float64(*s.ActorChurnedCount), b.Name, s.Name, "actor")
	}
	if s.PartnerChurnedCount != nil {
		out.Add(descSlaveChurned, float64(*s.PartnerChurnedCount), b.Name, s.Name, "partner")
	}
	counters(out, slaveCounterDescs, &s.Totals, l...)
	collectSwitchSide(out, b, s)
	collectPhysical(out, b, s)
}

// counters emits the kernel counters the source could read.
func counters(out batch, descs []*desc, t *model.Totals, labels ...string) {
	values := [...]*uint64{t.RxBytes, t.TxBytes, t.RxPackets, t.TxPackets, t.RxErrors, t.TxErrors, t.RxDropped, t.TxDropped, t.RxOverErrors, t.RxFifoErrors}
	for i, m := range counterMetrics {
		if v := values[m.counter]; v != nil {
			out.Add(descs[i], float64(*v), labels...)
		}
	}
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
