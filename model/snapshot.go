package model

import (
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/intent"
)

// Snapshot is one sample of every followed bond. It is immutable once the
// Sampler (package collector) hands it out: consumers (UI, JSON printer,
// recorder, metrics) may keep and share it without copying, until they
// hand it back to a Sampler with collector.Options.Recycle
// (Sampler.Release), whose later tick fills it again.
type Snapshot struct {
	Time time.Time `json:"time"`
	// IntervalSeconds is the measured time since the previous sample, the
	// denominator of every rate; 0 on the first sample.
	IntervalSeconds float64      `json:"interval_s"`
	Bonds           []BondSample `json:"bonds"`
	// Missing names bonds that were asked for and are not there now (the
	// bond was deleted mid-run).
	Missing []string `json:"missing_bonds,omitempty"`
	// Events found since the previous snapshot, oldest first.
	Events []Event `json:"events"`
	// Host holds host-wide settings (net.ipv4.tcp_reordering); nil when
	// the source has none.
	Host     *Host    `json:"host,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Notes say what the reader could not see, e.g. fields that need root.
	Notes []string `json:"notes,omitempty"`
	// Unprivileged is set when the reader could not see root-only fields
	// (LACPDU details: partner, port states); Notes says so in words.
	Unprivileged bool `json:"-"`
	// NoBonding is set when the bonding driver is gone: no bond at all,
	// and a warning that says so.
	NoBonding bool `json:"-"`
	// ReadWarnings is how many of Warnings, the first ones, came from
	// reading the host; the rest are the configuration's and the flow
	// table's.
	ReadWarnings int `json:"-"`
	// Config is the host's bond configuration and the running settings
	// it is compared with; nil when the source has none (demo, replay).
	// The comparison's results are each BondSample's Intended and Drift.
	Config *HostConfig `json:"-"`
	// Behind is the pace sampling achieves when it cannot keep the
	// interval asked for (reading and diagnosing take longer), 0 while it
	// keeps it: the dashboard's header shows it. Said once in Warnings.
	Behind time.Duration `json:"-"`
}

// Bond returns the sample of the bond called name, or nil.
func (s *Snapshot) Bond(name string) *BondSample {
	for i := range s.Bonds {
		if s.Bonds[i].Name == name {
			return &s.Bonds[i]
		}
	}
	return nil
}

// BondSample is a bond's state at the snapshot's time with its traffic
// over the interval. The bond's own counters count what crossed the bond
// device, which is not always the sum of its slaves.
type BondSample struct {
	bonding.Bond
	Traffic
	// Slaves hides bonding.Bond.Slaves in JSON: same order, with traffic.
	Slaves []SlaveSample `json:"slaves"`
	// Findings are the analyzer's diagnosis (collector.Options.Analyze),
	// worst first; nil when no analyzer ran.
	Findings []Finding `json:"findings"`
	// Intended is the bond as the host's configuration defines it; nil
	// when no configuration defines it (or none was read). Drift lists
	// the settings whose running value differs. The analyzer fills both.
	Intended *intent.Bond   `json:"intended"`
	Drift    []intent.Drift `json:"drift"`
	// Flows is the latest flow table of the bond
	// (collector.Options.Flows), shared by the snapshots until the next
	// socket dump; nil without a FlowReader. JSON carries only each
	// slave's Predicted sums.
	Flows *FlowTable `json:"-"`
	// Measured is every flow the flow meter counted on the bond's slaves
	// (collector.Options.Meter), or why there is no meter (source
	// "sockets"); nil when no meter was asked for (--root, --replay of old
	// recordings).
	// The JSON key is "traffic"; the embedded Traffic above holds the
	// bond's own counters.
	Measured *MeasuredTraffic `json:"traffic,omitempty"`
	// NeighborsWhy says why the slaves' LLDP/CDP neighbours could not be
	// listened for (no CAP_NET_RAW); absent when they could.
	NeighborsWhy *string `json:"neighbors_why,omitempty"`
	// DataAgeSeconds is how old the bond's data was when the snapshot
	// was made, for a bond another bondtop measured (a Relay source: the
	// time since the scrape it comes from); absent otherwise.
	DataAgeSeconds *float64 `json:"data_age_seconds,omitempty"`
}

// SlaveSample is one slave's state and traffic.
type SlaveSample struct {
	bonding.Slave
	Traffic
	// ShareRx and ShareTx are this slave's part (0..1) of the bytes all
	// slaves received and sent in the interval; nil when nothing moved or
	// a rate is missing.
	ShareRx *float64 `json:"share_rx"`
	ShareTx *float64 `json:"share_tx"`
	// Predicted sums the flow table's sockets the hash sends on this
	// slave; nil without a flow table.
	Predicted *Predicted `json:"predicted,omitempty"`
	// SwitchSide is what the far end says; nil (keys absent) when the
	// source does not listen.
	*SwitchSide
	// Physical is the slave's link state, FEC and module (physical.go);
	// nil (keys absent) when the source reads none.
	*Physical
}

// Traffic holds an interface's counters and what they did in the interval.
// A rate is nil on the first sample, for a new interface, and when any
// counter went back (reset, re-enslave, 32-bit wrap): never negative or
// huge.
type Traffic struct {
	Totals
	RxBps *float64 `json:"rx_bps"`
	TxBps *float64 `json:"tx_bps"`
	RxPps *float64 `json:"rx_pps"`
	TxPps *float64 `json:"tx_pps"`
	// Interval holds the errors, drops and overruns counted in the
	// interval; nil when no rate could be computed.
	Interval *ErrorCounts `json:"interval"`
}

// Totals are the kernel's cumulative counters (nil when not readable).
type Totals struct {
	RxBytes      *uint64 `json:"rx_bytes"`
	TxBytes      *uint64 `json:"tx_bytes"`
	RxPackets    *uint64 `json:"rx_packets"`
	TxPackets    *uint64 `json:"tx_packets"`
	RxErrors     *uint64 `json:"rx_errors"`
	TxErrors     *uint64 `json:"tx_errors"`
	RxDropped    *uint64 `json:"rx_dropped"`
	TxDropped    *uint64 `json:"tx_dropped"`
	RxOverErrors *uint64 `json:"rx_over_errors"`
	RxFifoErrors *uint64 `json:"rx_fifo_errors"`
}

// ErrorCounts are error, drop and overrun increments over one interval.
type ErrorCounts struct {
	RxErrors     *uint64 `json:"rx_errors"`
	TxErrors     *uint64 `json:"tx_errors"`
	RxDropped    *uint64 `json:"rx_dropped"`
	TxDropped    *uint64 `json:"tx_dropped"`
	RxOverErrors *uint64 `json:"rx_over_errors"`
	RxFifoErrors *uint64 `json:"rx_fifo_errors"`
}

// Any reports whether any error, drop or overrun happened.
func (e *ErrorCounts) Any() bool {
	if e == nil {
		return false
	}
	for _, p := range []*uint64{e.RxErrors, e.TxErrors, e.RxDropped, e.TxDropped, e.RxOverErrors, e.RxFifoErrors} {
		if p != nil && *p > 0 {
			return true
		}
	}
	return false
}

// Clone returns a copy of b that shares nothing a Sampler fills again
// when its snapshots are handed back (collector.Options.Recycle): the
// slaves, every number, the predicted traffic and the switch sides
// (neighbour, LACPDU sample) are its own. What the snapshots share and
// never write (flow tables, measured traffic, findings, carrier counts,
// the physical layer) stays shared. It is for reading a sample off the
// goroutine that holds its snapshot, or after handing the snapshot back.
func (b *BondSample) Clone() *BondSample {
	c := *b
	c.Traffic = b.Traffic.clone()
	c.Slaves = make([]SlaveSample, len(b.Slaves))
	for i, s := range b.Slaves {
		s.Traffic = s.Traffic.clone()
		s.ShareRx, s.ShareTx = own(s.ShareRx), own(s.ShareTx)
		if side := s.SwitchSide; side != nil {
			s.SwitchSide = side.clone()
		}
		if p := s.Predicted; p != nil {
			s.Predicted = &Predicted{Flows: p.Flows, TxBps: own(p.TxBps)}
		}
		c.Slaves[i] = s
	}
	return &c
}

func (t Traffic) clone() Traffic {
	c := t
	c.Totals = Totals{
		RxBytes: own(t.RxBytes), TxBytes: own(t.TxBytes),
		RxPackets: own(t.RxPackets), TxPackets: own(t.TxPackets),
		RxErrors: own(t.RxErrors), TxErrors: own(t.TxErrors),
		RxDropped: own(t.RxDropped), TxDropped: own(t.TxDropped),
		RxOverErrors: own(t.RxOverErrors), RxFifoErrors: own(t.RxFifoErrors),
	}
	c.RxBps, c.TxBps, c.RxPps, c.TxPps = own(t.RxBps), own(t.TxBps), own(t.RxPps), own(t.TxPps)
	if e := t.Interval; e != nil {
		c.Interval = &ErrorCounts{
			RxErrors: own(e.RxErrors), TxErrors: own(e.TxErrors),
			RxDropped: own(e.RxDropped), TxDropped: own(e.TxDropped),
			RxOverErrors: own(e.RxOverErrors), RxFifoErrors: own(e.RxFifoErrors),
		}
	}
	return c
}

// own is a copy of *p in a variable of its own; nil for nil.
func own[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
