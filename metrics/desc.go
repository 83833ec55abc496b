package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bondtop/bondtop/internal/printable"
)

// This file owns the step from bondtop's values to the Prometheus
// client's const metrics: every family is declared once with newDesc, and
// every sample passes through emit, which makes its label values safe.

// desc is one metric family: the client's descriptor and its type
// (bondtop computes every value when it is scraped, so gauges and
// counters are all it serves).
type desc struct {
	d *prometheus.Desc
	t prometheus.ValueType
}

// descs are every family newDesc declared, in declaration order: what the
// snapshot collector describes to the registry.
var descs []*desc

// newDesc declares a family of the snapshot collector. Names and labels
// are an interface (the shipped rules, the dashboard and users' queries
// name them): see docs/prometheus.md before changing one.
func newDesc(name, help string, t prometheus.ValueType, labels ...string) *desc {
	d := &desc{d: prometheus.NewDesc(name, help, labels, nil), t: t}
	descs = append(descs, d)
	return d
}

// Families of either type, as the declarations read best.
const (
	gauge   = prometheus.GaugeValue
	counter = prometheus.CounterValue
)

// batch is one collection: the registry's channel.
type batch struct {
	ch chan<- prometheus.Metric
}

// Add sends one sample of d. Label values can come from anywhere (an
// interface name, an LLDP neighbour, a transceiver's EEPROM, a tree
// copied from another host): control characters, C1 controls and bidi
// overrides are made visible (printable.String), so that no label reaches
// a terminal or a browser that shows it with a character that acts.
func (s batch) Add(d *desc, v float64, labelValues ...string) {
	for i, l := range labelValues {
		labelValues[i] = printable.String(l)
	}
	m, err := prometheus.NewConstMetric(d.d, d.t, v, labelValues...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d.d, err)
	}
	s.ch <- m
}
