// Package promtext owns the Prometheus text exposition format 0.0.4 that
// bondtop serves on /metrics: descriptors of metric families, a Scrape
// that gathers their samples in any order, the text it writes, and the
// HTTP handler that serves it.
//
// It replaces the Prometheus Go client, whose registry, protobuf model and
// procfs reader were linked into every build of bondtop and cost the
// dashboard resident memory even when no metrics were served. bondtop
// needs a small part of it: gauges and counters computed at scrape time,
// in the text format every Prometheus server reads.
//
// The text is written as the Go client wrote it, byte for byte (families
// sorted by name, samples by label values, labels by name, the same
// escapes and number formats), so what a server stores, and the order a
// diff of two scrapes shows, does not change with the switch.
package promtext

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Type is a family's TYPE. bondtop computes every value at scrape time,
// so gauges and counters are all it needs; summaries and histograms, with
// their suffixed series, are left out.
type Type uint8

// The types a family can have.
const (
	// Gauge is a value that goes up and down.
	Gauge Type = iota + 1
	// Counter is a value that only goes up, but for a restart.
	Counter
)

// String returns the type as a TYPE line names it.
func (t Type) String() string {
	switch t {
	case Gauge:
		return "gauge"
	case Counter:
		return "counter"
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Desc describes a metric family: its name, HELP text, TYPE and label
// names. Descriptors are made once, as package variables, and shared by
// every scrape.
type Desc struct {
	name string
	help string
	typ  Type
	// labels are the label names sorted, as they are written (the order
	// the Go client wrote them in, and the order samples sort by).
	labels []string
	// order maps them to the caller's order: labels[i] is the caller's
	// order[i]th label.
	order []int
	// id tells apart two descriptors given the same name: only the first
	// one made is written (see Scrape.WriteTo).
	id uint64
}

var lastID atomic.Uint64

// NewDesc returns the descriptor of a family called name, of type t, with
// these label names in the order Scrape.Add takes their values.
//
// help may be any text: bytes that are not UTF-8 are replaced with U+FFFD
// and leading blanks are dropped, since the format carries neither (a
// parser skips the blanks before the text). NewDesc panics on a name or
// label name the format does not allow, a label name given twice, or an
// unknown type: descriptors are package variables, so such a mistake
// stops the program at start, and any test, rather than a scrape.
func NewDesc(name, help string, t Type, labelNames ...string) *Desc {
	if !validMetricName(name) {
		panic(fmt.Sprintf("promtext: invalid metric name %q", name))
	}
	if t != Gauge && t != Counter {
		panic(fmt.Sprintf("promtext: %s: unknown type %d", name, t))
	}
	d := &Desc{
		name:   name,
		help:   strings.TrimLeft(validUTF8(help), " \t"),
		typ:    t,
		labels: slices.Clone(labelNames),
		order:  make([]int, len(labelNames)),
		id:     lastID.Add(1),
	}
	for i, l := range labelNames {
		if !validLabelName(l) {
			panic(fmt.Sprintf("promtext: %s: invalid label name %q", name, l))
		}
		d.order[i] = i
	}
	slices.SortFunc(d.order, func(a, b int) int { return strings.Compare(labelNames[a], labelNames[b]) })
	for i, j := range d.order {
		d.labels[i] = labelNames[j]
		if i > 0 && d.labels[i] == d.labels[i-1] {
			panic(fmt.Sprintf("promtext: %s: label %q given twice", name, d.labels[i]))
		}
	}
	return d
}

// validMetricName reports whether s matches [a-zA-Z_:][a-zA-Z0-9_:]*, a
// name every version of the format and of Prometheus takes unquoted.
func validMetricName(s string) bool { return validName(s, true) }

// validLabelName reports whether s matches [a-zA-Z_][a-zA-Z0-9_]* and is
// not reserved (a leading "__" is Prometheus's own).
func validLabelName(s string) bool {
	return !strings.HasPrefix(s, "__") && validName(s, false)
}

// validName reports whether s is a non-empty run of letters, digits and
// underscores (and colons, if colon) that does not start with a digit.
func validName(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || colon && c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// validUTF8 replaces each run of bytes that are not UTF-8 with U+FFFD.
// Linux takes any bytes as an interface name, and a --root tree may hold
// anything; Prometheus takes only UTF-8, and one invalid value would cost
// the whole scrape. A valid string is returned as it is.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// A Scrape gathers the samples of one scrape, in any order, and writes
// them as text. The zero Scrape is empty and ready to use; it is not safe
// for concurrent use (each request of Handler has its own).
type Scrape struct {
	samples []sample
	// values holds the label values of every sample, back to back, in
	// their descriptor's sorted order: one slice per scrape, not one per
	// sample.
	values []string
	buf    []byte
	// only, when not nil, names the families to write (the name[]
	// parameters of the request).
	only map[string]bool
}

type sample struct {
	desc  *Desc
	value float64
	at    int // the labels are values[at : at+len(desc.labels)]
}

// Add adds a sample of d's family: the value v with the label values in
// the order of d's label names. Label values may be any text; bytes that
// are not UTF-8 are replaced with U+FFFD, as Prometheus takes only UTF-8.
// The caller's slice is not kept or changed.
//
// A sample with the family and label values (after that repair) of one
// added before is dropped when written. Add panics when the number of
// values is not that of d's label names: a mistake in the code, which
// every test that scrapes finds.
func (s *Scrape) Add(d *Desc, v float64, labelValues ...string) {
	if len(labelValues) != len(d.labels) {
		panic(fmt.Sprintf("promtext: %s: %d label values for labels %v", d.name, len(labelValues), d.labels))
	}
	at := len(s.values)
	for _, i := range d.order {
		s.values = append(s.values, validUTF8(labelValues[i]))
	}
	s.samples = append(s.samples, sample{desc: d, value: v, at: at})
}

// Reset empties s for another scrape, keeping its memory but no
// reference to the strings added.
func (s *Scrape) Reset() {
	clear(s.samples)
	clear(s.values)
	s.samples, s.values, s.only = s.samples[:0], s.values[:0], nil
}

func (s *Scrape) labelValues(x *sample) []string {
	return s.values[x.at : x.at+len(x.desc.labels)]
}

// compare orders samples by family name, then (for two descriptors with
// one name) by descriptor, then by label values in the order of the
// sorted label names: the order the Go client wrote them in.
func (s *Scrape) compare(a, b sample) int {
	if c := strings.Compare(a.desc.name, b.desc.name); c != 0 {
		return c
	}
	if a.desc.id != b.desc.id {
		if a.desc.id < b.desc.id {
			return -1
		}
		return 1
	}
	return slices.Compare(s.labelValues(&a), s.labelValues(&b))
}

// WriteTo writes the samples added since the last Reset as text format
// 0.0.4, in one Write to w: families sorted by name, each with its HELP
// and TYPE once, its samples sorted by label values. A family with no
// sample is not written; an empty scrape writes nothing.
//
// Two samples of one family with the same label values would make the
// whole scrape invalid: Prometheus rejects a scrape that has a series
// twice. Only the first added is written, as the Go client did (it
// reported the later one as an error and served the rest). For the same
// reason, of two descriptors with one name only the one made first is
// written.
func (s *Scrape) WriteTo(w io.Writer) (int64, error) {
	// Stable: among equal samples the first added stays first, and is
	// the one kept.
	slices.SortStableFunc(s.samples, s.compare)
	b := s.buf[:0]
	var family *Desc
	var prev []string
	for i := range s.samples {
		x := &s.samples[i]
		d := x.desc
		if s.only != nil && !s.only[d.name] {
			continue
		}
		labels := s.labelValues(x)
		if family != nil && d.name == family.name {
			if d != family || slices.Equal(labels, prev) {
				continue
			}
		} else {
			family = d
			b = appendHeader(b, d)
		}
		b = appendSample(b, d, labels, x.value)
		prev = labels
	}
	s.buf = b
	n, err := w.Write(b)
	return int64(n), err
}

func appendHeader(b []byte, d *Desc) []byte {
	b = append(b, "# HELP "...)
	b = append(b, d.name...)
	b = append(b, ' ')
	b = appendEscaped(b, d.help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, d.name...)
	b = append(b, ' ')
	b = append(b, d.typ.String()...)
	return append(b, '\n')
}

func appendSample(b []byte, d *Desc, values []string, v float64) []byte {
	b = append(b, d.name...)
	if len(values) > 0 {
		b = append(b, '{')
		for i, name := range d.labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, name...)
			b = append(b, `="`...)
			b = appendEscaped(b, values[i], true)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendFloat(b, v)
	return append(b, '\n')
}

// appendEscaped appends s with the format's escapes: a backslash and a
// newline always (HELP text ends at a newline), a double quote in a label
// value (which it would end).
func appendEscaped(b []byte, s string, quoted bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quoted:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendFloat appends v as the format writes a value: +Inf, -Inf and NaN
// by name, zero (also negative zero) as 0, anything else in the shortest
// form that reads back as v ('g' with the least precision needed), as
// the Go client wrote it.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case v == 0:
		return append(b, '0')
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, +1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
