package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
)

// DefaultRefresh is how often Source asks Prometheus again: a scrape
// interval is seldom shorter, and a refresh of a large fleet takes a
// good part of a second of Prometheus' time.
const DefaultRefresh = 5 * time.Second

// Source shows the fleet through the dashboard: every (instance, bond)
// Prometheus holds is one bond of the reading, named "instance/bond", so
// the bond list, [ ] and the dashboard work as on one host. It is a
// collector.Relay: the rates, findings and data age are the exporters'
// own, as Prometheus holds them. A failed refresh keeps the last fleet
// and says so in the reading's warnings, naming the URL and the data's
// time; only a first read that fails is an error. See docs/fleet.md.
type Source struct {
	client  *Client
	refresh time.Duration
	now     func() time.Time

	reads sync.Mutex // held by Read, across its refresh

	mu      sync.Mutex // guards what follows
	tried   time.Time  // the last refresh, successful or not
	fleet   *Fleet     // the last successful one; nil before it
	failure error      // the last refresh's error, nil when it worked
	reading []bonding.Bond
	byName  map[string]*Bond
	// findings are each bond's, as Findings hands them out.
	findings map[string][]model.Finding
	order    []string // the bonds' names, worst first
	focus    string   // the bond on screen (Focus)
}

// NewSource reads the fleet through c at most once per refresh
// (DefaultRefresh when zero), and the bond on screen (Focus) in full
// detail: c should ask for DetailLinks, which the bond list needs.
func NewSource(c *Client, refresh time.Duration) *Source {
	if refresh <= 0 {
		refresh = DefaultRefresh
	}
	return &Source{client: c, refresh: refresh, now: time.Now}
}

// Read returns the fleet as bonds, asking Prometheus when the last
// answer is older than the refresh.
func (s *Source) Read() (collector.Reading, error) {
	s.reads.Lock() // one refresh at a time
	defer s.reads.Unlock()
	now := s.now()
	s.mu.Lock()
	due := s.tried.IsZero() || now.Sub(s.tried) >= s.refresh
	s.mu.Unlock()
	if due {
		// Asked without holding mu: the dashboard's list asks for
		// Order meanwhile, and a refresh may take seconds.
		f, err := s.client.Read(context.Background())
		if err == nil {
			s.detail(f)
		}
		s.mu.Lock()
		s.tried, s.failure = now, err
		if err == nil {
			s.take(f)
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fleet == nil {
		return collector.Reading{}, s.failure
	}
	r := collector.Reading{Bonds: s.reading}
	r.Warnings = append(r.Warnings, s.fleet.Warnings...)
	if len(s.fleet.Bonds) == 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("prometheus at %s holds no bond of a bondtop exporter (check --prometheus-match, and that it scrapes bondtop --listen)", s.fleet.URL))
	}
	for _, e := range s.fleet.Exporters {
		if e.Bonds == 0 && !e.Up {
			// No bond to list it under: a target Prometheus cannot
			// scrape, that never served a bond in the lookback.
			r.Warnings = append(r.Warnings, fmt.Sprintf("exporter %s (job %s) is down and no bond of it is known", e.Instance, e.Job))
		}
	}
	if s.failure != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%v; showing what it said at %s (%s ago)",
			s.failure, s.fleet.Time.Format("15:04:05"), now.Sub(s.fleet.Time).Round(time.Second)))
	}
	return r, nil
}

// detail reads the bond on screen (Focus) in full, with the other bonds
// of its target, into f: its slaves' rates, speeds and LACP series. A
// failure leaves f as the list has it, and says so.
func (s *Source) detail(f *Fleet) {
	s.mu.Lock()
	focus := s.focus
	s.mu.Unlock()
	i := slices.Index(displayNames(f.Bonds), focus)
	if i < 0 || s.client.detail == DetailFull {
		return
	}
	on := &f.Bonds[i]
	d, err := s.client.Scoped(on.Instance, on.Job).Read(context.Background())
	if err != nil {
		f.Warnings = append(f.Warnings, fmt.Sprintf("the detail of %s: %v", focus, err))
		return
	}
	f.Queries += d.Queries
	f.Warnings = append(f.Warnings, d.Warnings...)
	for i := range d.Bonds {
		db := &d.Bonds[i]
		for j := range f.Bonds {
			if b := &f.Bonds[j]; b.Instance == db.Instance && b.Job == db.Job && b.Name == db.Name {
				*b = *db // in the list's place: the order stays the list's
			}
		}
	}
}

// displayNames are the names the bonds have in a reading:
// "instance/bond", and " (job)" after it for the same target listed
// again under another job.
func displayNames(bonds []Bond) []string {
	names := make([]string, len(bonds))
	taken := make(map[string]bool, len(bonds))
	for i := range bonds {
		name := bonds[i].Instance + "/" + bonds[i].Name
		if taken[name] {
			name += " (" + bonds[i].Job + ")"
		}
		taken[name] = true
		names[i] = name
	}
	return names
}

// Focus names the bond on screen: the next Read asks Prometheus at once,
// for it in full detail.
func (s *Source) Focus(bond string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bond != s.focus {
		s.focus = bond
		s.tried = time.Time{}
	}
}

// take makes f the fleet shown: a new slice of bonds, never a change to
// the one handed out before (the Sampler holds it as the last reading).
func (s *Source) take(f *Fleet) {
	s.fleet = f
	s.reading = make([]bonding.Bond, 0, len(f.Bonds))
	s.byName = make(map[string]*Bond, len(f.Bonds))
	s.findings = make(map[string][]model.Finding, len(f.Bonds))
	s.order = displayNames(f.Bonds)
	for i, name := range s.order {
		b := &f.Bonds[i]
		s.byName[name] = b
		s.findings[name] = findingsOf(b)
		s.reading = append(s.reading, asBond(name, b))
	}
	// The Sampler keeps a reading's bonds in name order (Reading.Bonds).
	slices.SortFunc(s.reading, func(x, y bonding.Bond) int { return strings.Compare(x.Name, y.Name) })
}

// asBond is what the metrics say of b, in the kernel's terms.
func asBond(name string, b *Bond) bonding.Bond {
	out := bonding.Bond{Name: name, Mode: b.Mode, XmitHashPolicy: b.XmitHashPolicy, MIIStatus: b.MIIStatus}
	if l := b.LACP; l != nil {
		out.LACP = &bonding.LACP{Rate: l.Rate, ADSelect: l.ADSelect, AggregatorID: l.AggregatorID,
			NumPorts: l.NumPorts, NoActiveAggregator: l.NoActiveAggregator}
	}
	out.Slaves = make([]bonding.Slave, len(b.Slaves))
	for i, sl := range b.Slaves {
		out.Slaves[i] = bonding.Slave{Name: sl.Name, MIIStatus: sl.MIIStatus, State: sl.State, SpeedMbps: sl.SpeedMbps,
			AggregatorID: sl.AggregatorID, ActorChurnedCount: sl.ActorChurnedCount, PartnerChurnedCount: sl.PartnerChurnedCount,
			Actor: sl.Actor, Partner: sl.Partner}
		if sl.State != nil && *sl.State == "active" && carriesAlone(b.Mode) {
			out.ActiveSlave = &out.Slaves[i].Name
		}
	}
	return out
}

// carriesAlone: the modes with one active slave, which the kernel names
// active_slave.
func carriesAlone(mode *string) bool {
	if mode == nil {
		return false
	}
	switch *mode {
	case bonding.ModeActiveBackup, bonding.ModeTLB, bonding.ModeALB:
		return true
	}
	return false
}

// Close ends nothing: each refresh is one set of HTTP requests.
func (s *Source) Close() error { return nil }

// Rate is the rate() Prometheus computed over the exporter's counters.
func (s *Source) Rate(bond, slave string) (rxBps, txBps float64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.byName[bond]
	if b == nil || !b.ExporterUp {
		return 0, 0, false
	}
	if slave == "" {
		return bothRates(b.RxBps, b.TxBps)
	}
	for i := range b.Slaves {
		if b.Slaves[i].Name == slave {
			return bothRates(b.Slaves[i].RxBps, b.Slaves[i].TxBps)
		}
	}
	return 0, 0, false
}

func bothRates(rx, tx *float64) (float64, float64, bool) {
	if rx == nil || tx == nil {
		return 0, 0, false
	}
	return *rx, *tx, true
}

// Findings are the exporter's findings, made once a refresh (take): the
// Sampler asks every tick.
func (s *Source) Findings(bond string) []model.Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.findings[bond]
}

// findingsOf is b's findings as the exporter reported them
// (bondtop_finding) and, for a host whose exporter is down, one that
// says so.
func findingsOf(b *Bond) []model.Finding {
	out := make([]model.Finding, 0, len(b.Findings)+1)
	if !b.ExporterUp {
		seen := "its last values are from the last hour"
		if b.DataAgeSeconds != nil {
			seen = fmt.Sprintf("its last values are %s old", (time.Duration(*b.DataAgeSeconds) * time.Second).String())
		}
		out = append(out, model.Finding{ID: "exporter-down", Severity: model.SeverityCritical,
			Slaves:  []string{},
			Message: fmt.Sprintf("Prometheus cannot scrape %s (up == 0): %s", b.Instance, seen),
			Detail:  "The bond is shown as last seen: no rates, no findings. Check that bondtop --listen runs on the host and that Prometheus reaches it (its targets page says why the scrape fails)."})
	}
	for _, f := range b.Findings {
		msg := f.ID
		if len(f.Slaves) > 0 {
			msg += " on " + strings.Join(f.Slaves, ", ")
		}
		out = append(out, model.Finding{ID: f.ID, Severity: model.Severity(f.Severity), Slaves: f.Slaves,
			Message: msg,
			Detail:  fmt.Sprintf("As the host's bondtop reports it (bondtop_finding). Run bondtop on %s for the numbers and what to do: the metric carries the finding's id, severity and slaves only.", b.Instance)})
	}
	return out
}

// DataAge is the time since the bond's exporter last sampled its host.
func (s *Source) DataAge(bond string, now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.byName[bond]
	if b == nil || b.DataAgeSeconds == nil || s.fleet == nil {
		return 0, false
	}
	// The age when the fleet was read, grown by the time since.
	return time.Duration(*b.DataAgeSeconds*float64(time.Second)) + max(now.Sub(s.fleet.Time), 0), true
}

// Order is the bonds' names worst first (Sort), as of the last refresh:
// the order the bond list shows them in.
func (s *Source) Order() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.order...)
}

// URL is the Prometheus the source reads, as messages name it.
func (s *Source) URL() string { return s.client.URL() }

// The capabilities of the Source contract (collector/source.go) the
// fleet's source has.
var (
	_ collector.Relay      = (*Source)(nil)
	_ collector.Focuser    = (*Source)(nil)
	_ collector.Backfiller = (*Source)(nil)
)
