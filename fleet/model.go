package fleet

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/natural"
)

// Fleet is one refresh of the list: every (instance, bond) Prometheus
// holds bondtop metrics for, worst first, and every exporter.
type Fleet struct {
	Time      time.Time
	URL       string
	Bonds     []Bond
	Exporters []Exporter
	Warnings  []string
	// Queries is how many queries the refresh sent.
	Queries int
}

// Exporter is one scraped bondtop target.
type Exporter struct {
	Instance string `json:"instance"`
	Job      string `json:"job"`
	Up       bool   `json:"up"`
	Bonds    int    `json:"bonds"`
	// LastSample is when the exporter last sampled its host, by its own
	// clock (bondtop_last_sample_timestamp_seconds); nil when unknown.
	LastSample *time.Time `json:"last_sample"`
}

// Bond is one bond of one host, with the keys of the local --json that
// the metrics carry (docs/json.md) and where it came from. A value the
// metrics do not give is nil, never zero.
type Bond struct {
	Instance string `json:"instance"`
	Job      string `json:"job"`
	// ExporterUp is false when Prometheus could not scrape the host at
	// its latest try: the bond is shown as last seen, without rates and
	// findings.
	ExporterUp     bool      `json:"exporter_up"`
	Name           string    `json:"name"`
	Mode           *string   `json:"mode"`
	XmitHashPolicy *string   `json:"xmit_hash_policy"`
	MIIStatus      *string   `json:"mii_status"`
	SlavesTotal    *int      `json:"slaves_total"`
	SlavesUp       *int      `json:"slaves_up"`
	RxBps          *float64  `json:"rx_bps"`
	TxBps          *float64  `json:"tx_bps"`
	Slaves         []Slave   `json:"slaves"`
	Findings       []Finding `json:"findings"`
	LACP           *LACP     `json:"lacp"`
	Severity       string    `json:"severity"` // the worst finding's: critical, warning, info; "" for none
	// DataAgeSeconds is how old the bond's data was when the fleet was
	// read: the time since its exporter last sampled; nil when unknown.
	DataAgeSeconds *float64 `json:"data_age_seconds"`
	rank           rank
}

// LACP is what the metrics say of an 802.3ad bond.
type LACP struct {
	Rate               *string `json:"rate"`
	ADSelect           *string `json:"ad_select"`
	NoActiveAggregator bool    `json:"no_active_aggregator"`
	AggregatorID       *int    `json:"aggregator_id"`
	NumPorts           *int    `json:"num_ports"`
}

// Slave is one slave of a bond. The LACP fields have the local JSON's
// keys and shapes (docs/json.md); the partner's only as far as the
// metrics carry it (system MAC, key, port number, state).
type Slave struct {
	Name                string               `json:"name"`
	MIIStatus           *string              `json:"mii_status"`
	State               *string              `json:"state"`
	SpeedMbps           *int                 `json:"speed_mbps"`
	RxBps               *float64             `json:"rx_bps"`
	TxBps               *float64             `json:"tx_bps"`
	AggregatorID        *int                 `json:"aggregator_id"`
	ActorChurnedCount   *int                 `json:"actor_churned_count"`
	PartnerChurnedCount *int                 `json:"partner_churned_count"`
	Actor               *bonding.ActorPort   `json:"actor"`
	Partner             *bonding.PartnerPort `json:"partner"`
}

// Finding is one finding of bondtop's diagnosis on the host.
type Finding struct {
	ID       string   `json:"id"`
	Severity string   `json:"severity"`
	Slaves   []string `json:"slaves"`
}

// Series is one series of an instant query's answer: its labels (the
// metric's name under "__name__") and its value.
type Series struct {
	Labels map[string]string
	Value  float64
}

// rank orders the list: lower is worse.
type rank int

const (
	rankCritical rank = iota // a critical finding
	rankDown                 // the exporter is down: nothing is known now
	rankWarning              // a warning finding
	rankDegraded             // a slave or the bond is down, without a finding saying so
	rankRest                 // the busiest first
)

type bondKey struct{ instance, job, bond string }

// Assemble builds the fleet from the answers of the four queries
// (Queries): up, gauges, last known gauges, rates. It is pure, so the
// list can be tested without a Prometheus.
func Assemble(up, gauges, lastKnown, rates []Series) *Fleet {
	f := &Fleet{}
	exporters := map[[2]string]*Exporter{}
	for _, s := range up {
		k := [2]string{string(s.Labels["instance"]), string(s.Labels["job"])}
		if e := exporters[k]; e != nil {
			e.Up = e.Up || s.Value == 1
			continue
		}
		exporters[k] = &Exporter{Instance: k[0], Job: k[1], Up: s.Value == 1}
	}
	bonds := map[bondKey]*Bond{}
	// One map each for all bonds: 10 000 small maps cost more than the
	// rest of the list (BenchmarkAssemble10000).
	type slaveKey struct {
		bondKey
		slave string
	}
	type findingKey struct {
		bondKey
		id, severity string
	}
	slaves := map[slaveKey]*Slave{}
	findings := map[findingKey]*Finding{}
	bondSlaves := map[bondKey][]*Slave{}
	bondFindings := map[bondKey][]*Finding{}
	bondOf := func(m map[string]string) *Bond {
		k := bondKey{string(m["instance"]), string(m["job"]), string(m["bond"])}
		if k.bond == "" {
			return nil
		}
		b := bonds[k]
		if b == nil {
			b = &Bond{Instance: k.instance, Job: k.job, Name: k.bond, Findings: []Finding{}, ExporterUp: true}
			if e := exporters[[2]string{k.instance, k.job}]; e != nil {
				b.ExporterUp = e.Up
			}
			bonds[k] = b
		}
		return b
	}
	slaveOf := func(m map[string]string) *Slave {
		if bondOf(m) == nil || m["slave"] == "" {
			return nil
		}
		k := bondKey{string(m["instance"]), string(m["job"]), string(m["bond"])}
		sk := slaveKey{k, string(m["slave"])}
		s := slaves[sk]
		if s == nil {
			s = &Slave{Name: sk.slave}
			slaves[sk] = s
			bondSlaves[k] = append(bondSlaves[k], s)
		}
		return s
	}
	gauge := func(name string, s *Series) {
		v := float64(s.Value)
		if math.IsNaN(v) {
			return
		}
		m := s.Labels
		switch name {
		case "bondtop_bond_info":
			if b := bondOf(m); b != nil {
				b.Mode = label(m, "mode")
				b.XmitHashPolicy = label(m, "xmit_hash_policy")
				if r, a := label(m, "lacp_rate"), label(m, "ad_select"); r != nil || a != nil {
					b.LACP = &LACP{Rate: r, ADSelect: a}
				}
			}
		case "bondtop_bond_up":
			if b := bondOf(m); b != nil {
				b.MIIStatus = upDown(v)
			}
		case "bondtop_bond_slaves":
			if b := bondOf(m); b != nil {
				b.SlavesTotal = intPtr(v)
			}
		case "bondtop_bond_slaves_up":
			if b := bondOf(m); b != nil {
				b.SlavesUp = intPtr(v)
			}
		case "bondtop_slave_up":
			if s := slaveOf(m); s != nil {
				s.MIIStatus = upDown(v)
			}
		case "bondtop_slave_active":
			if s := slaveOf(m); s != nil {
				st := "backup"
				if v == 1 {
					st = "active"
				}
				s.State = &st
			}
		case "bondtop_slave_speed_bytes":
			if s := slaveOf(m); s != nil {
				s.SpeedMbps = intPtr(v * 8 / 1e6)
			}
		case "bondtop_bond_active_aggregator_id", "bondtop_bond_active_aggregator_ports", "bondtop_bond_no_active_aggregator":
			if b := bondOf(m); b != nil {
				if b.LACP == nil {
					b.LACP = &LACP{}
				}
				switch name {
				case "bondtop_bond_active_aggregator_id":
					b.LACP.AggregatorID = intPtr(v)
				case "bondtop_bond_active_aggregator_ports":
					b.LACP.NumPorts = intPtr(v)
				default:
					b.LACP.NoActiveAggregator = v == 1
				}
			}
		case "bondtop_slave_aggregator_id":
			if s := slaveOf(m); s != nil {
				s.AggregatorID = intPtr(v)
			}
		case "bondtop_slave_lacp_port_state":
			s := slaveOf(m)
			if s == nil || v < 0 || v > 255 {
				return
			}
			st := bonding.PortState(v)
			switch m["side"] {
			case "actor":
				if s.Actor == nil {
					s.Actor = &bonding.ActorPort{}
				}
				s.Actor.PortState = &st
			case "partner":
				if s.Partner == nil {
					s.Partner = &bonding.PartnerPort{}
				}
				s.Partner.PortState = &st
			}
		case "bondtop_slave_lacp_partner_info":
			if s := slaveOf(m); s != nil {
				if s.Partner == nil {
					s.Partner = &bonding.PartnerPort{}
				}
				s.Partner.SystemMAC = label(m, "partner_mac")
				s.Partner.Key = atoi(m["partner_key"])
				s.Partner.PortNumber = atoi(m["partner_port"])
			}
		case "bondtop_slave_lacp_churned_total":
			if s := slaveOf(m); s != nil {
				switch m["side"] {
				case "actor":
					s.ActorChurnedCount = intPtr(v)
				case "partner":
					s.PartnerChurnedCount = intPtr(v)
				}
			}
		case "bondtop_last_sample_timestamp_seconds":
			if e := exporters[[2]string{string(m["instance"]), string(m["job"])}]; e != nil && v > 0 {
				t := time.Unix(int64(v), 0)
				e.LastSample = &t
			}
		case "bondtop_finding":
			b := bondOf(m)
			if b == nil || v != 1 {
				return
			}
			k := bondKey{b.Instance, b.Job, b.Name}
			fk := findingKey{k, string(m["id"]), string(m["severity"])}
			fd := findings[fk]
			if fd == nil {
				fd = &Finding{ID: fk.id, Severity: fk.severity, Slaves: []string{}}
				findings[fk] = fd
				bondFindings[k] = append(bondFindings[k], fd)
			}
			if sl := string(m["slave"]); sl != "" {
				fd.Slaves = append(fd.Slaves, sl)
			}
		}
	}
	for i := range gauges {
		gauge(gauges[i].Labels["__name__"], &gauges[i])
	}
	for i := range lastKnown {
		s := &lastKnown[i]
		k := bondKey{string(s.Labels["instance"]), string(s.Labels["job"]), string(s.Labels["bond"])}
		if b := bonds[k]; b != nil && b.ExporterUp {
			continue // a current value exists
		}
		gauge(string(s.Labels[tagLabel]), s)
	}
	for _, s := range rates {
		v := float64(s.Value)
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			continue
		}
		bps := v * 8
		k := bondKey{string(s.Labels["instance"]), string(s.Labels["job"]), string(s.Labels["bond"])}
		if bonds[k] == nil || !bonds[k].ExporterUp {
			// Rates alone make no bond (it is gone), and a rate() over
			// the samples from before a host went down is no rate now.
			continue
		}
		switch s.Labels[tagLabel] {
		case "bond_tx":
			bonds[k].TxBps = &bps
		case "bond_rx":
			bonds[k].RxBps = &bps
		case "slave_tx":
			if sl := slaveOf(s.Labels); sl != nil {
				sl.TxBps = &bps
			}
		case "slave_rx":
			if sl := slaveOf(s.Labels); sl != nil {
				sl.RxBps = &bps
			}
		}
	}
	for k, b := range bonds {
		for _, s := range bondSlaves[k] {
			b.Slaves = append(b.Slaves, *s)
		}
		slices.SortFunc(b.Slaves, func(x, y Slave) int { return natural.Compare(x.Name, y.Name) })
		for _, fd := range bondFindings[k] {
			slices.SortFunc(fd.Slaves, natural.Compare)
			fd.Slaves = slices.Compact(fd.Slaves)
			b.Findings = append(b.Findings, *fd)
		}
		slices.SortFunc(b.Findings, func(x, y Finding) int {
			if c := severityOrder(x.Severity) - severityOrder(y.Severity); c != 0 {
				return c
			}
			return natural.Compare(x.ID, y.ID)
		})
		if len(b.Findings) > 0 {
			b.Severity = b.Findings[0].Severity
		}
		b.rank = rankOf(b)
		f.Bonds = append(f.Bonds, *b)
		if e := exporters[[2]string{k.instance, k.job}]; e != nil {
			e.Bonds++
		}
	}
	Sort(f.Bonds)
	for _, e := range exporters {
		f.Exporters = append(f.Exporters, *e)
	}
	slices.SortFunc(f.Exporters, func(x, y Exporter) int {
		if x.Up != y.Up {
			if !x.Up {
				return -1
			}
			return 1
		}
		if c := natural.Compare(x.Instance, y.Instance); c != 0 {
			return c
		}
		return natural.Compare(x.Job, y.Job)
	})
	return f
}

func severityOrder(s string) int {
	switch s {
	case "critical":
		return 0
	case "warning":
		return 1
	case "info":
		return 2
	}
	return 3
}

func rankOf(b *Bond) rank {
	worst := 3
	for _, f := range b.Findings {
		worst = min(worst, severityOrder(f.Severity))
	}
	switch {
	case worst == 0:
		return rankCritical
	case !b.ExporterUp:
		return rankDown
	case worst == 1:
		return rankWarning
	case b.MIIStatus != nil && *b.MIIStatus != "up",
		b.SlavesUp != nil && b.SlavesTotal != nil && *b.SlavesUp < *b.SlavesTotal:
		return rankDegraded
	}
	for _, s := range b.Slaves {
		if s.MIIStatus != nil && *s.MIIStatus != "up" {
			return rankDegraded
		}
	}
	return rankRest
}

// Sort orders bonds worst first: critical findings, exporter down,
// warnings, degraded; inside each of those by instance, bond and job in
// natural order; then the rest, the busiest (tx + rx) first.
func Sort(bonds []Bond) {
	for i := range bonds {
		bonds[i].rank = rankOf(&bonds[i])
	}
	slices.SortStableFunc(bonds, compare)
}

func compare(x, y Bond) int {
	if x.rank != y.rank {
		return int(x.rank) - int(y.rank)
	}
	if x.rank == rankRest {
		if bx, by := busy(x), busy(y); bx != by {
			if bx > by {
				return -1
			}
			return 1
		}
	}
	if c := natural.Compare(x.Instance, y.Instance); c != 0 {
		return c
	}
	if c := natural.Compare(x.Name, y.Name); c != 0 {
		return c
	}
	return natural.Compare(x.Job, y.Job)
}

// busy is the bond's traffic; -1 when unknown, after an idle bond.
func busy(b Bond) float64 {
	if b.TxBps == nil && b.RxBps == nil {
		return -1
	}
	var t float64
	if b.TxBps != nil {
		t += *b.TxBps
	}
	if b.RxBps != nil {
		t += *b.RxBps
	}
	return t
}

// label is a label's value; nil when empty (the exporter writes "" for
// a value the kernel did not give).
func label(m map[string]string, name string) *string {
	v := string(m[name])
	if v == "" {
		return nil
	}
	return &v
}

// atoi is a label's number; nil when empty or not a number.
func atoi(v string) *int {
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return nil
	}
	return &n
}

func upDown(v float64) *string {
	s := "down"
	if v == 1 {
		s = "up"
	}
	return &s
}

func intPtr(v float64) *int {
	i := int(math.Round(v))
	return &i
}

// age sets each bond's DataAgeSeconds: the time from its exporter's
// last sample to now.
func (f *Fleet) age(now time.Time) {
	sampled := make(map[[2]string]time.Time, len(f.Exporters))
	for _, e := range f.Exporters {
		if e.LastSample != nil {
			sampled[[2]string{e.Instance, e.Job}] = *e.LastSample
		}
	}
	for i := range f.Bonds {
		b := &f.Bonds[i]
		if t, ok := sampled[[2]string{b.Instance, b.Job}]; ok {
			a := max(now.Sub(t).Seconds(), 0)
			b.DataAgeSeconds = &a
		}
	}
}

// Worst is the bond's worst finding as "id (severity)", "exporter down",
// or "" for none: the list's last column.
func (b *Bond) Worst() string {
	if len(b.Findings) > 0 {
		s := b.Findings[0].ID
		if n := len(b.Findings); n > 1 {
			s += " +" + strconv.Itoa(n-1)
		}
		return s
	}
	return ""
}
