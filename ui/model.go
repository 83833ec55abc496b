package ui

import (
	"cmp"
	"slices"
	"time"

	"github.com/bondtop/bondtop/internal/natural"
	"github.com/bondtop/bondtop/model"
)

// SortOrder is how the slaves table orders its rows.
type SortOrder int

// The sort orders, in the order the s key cycles through them. Enslave
// order comes first because the kernel's transmit hash picks slaves by
// their position in it.
const (
	SortEnslave SortOrder = iota
	SortRx
	SortTx
	SortErrors
	SortName
	numSortOrders
)

func (s SortOrder) String() string {
	switch s {
	case SortRx:
		return "rx"
	case SortTx:
		return "tx"
	case SortErrors:
		return "errors"
	case SortName:
		return "name"
	default:
		return "enslave"
	}
}

// GraphWindows are the spans the g key cycles through.
var GraphWindows = []time.Duration{time.Minute, 5 * time.Minute, time.Hour}

// maxEvents bounds the events log: enough for a long incident, small
// enough that a flapping link cannot grow memory without end.
const maxEvents = 1000

// Model is what the dashboard shows, independent of any widget: views read
// it, key handlers and new snapshots change it, all on the event loop.
type Model struct {
	// Snap is the snapshot on screen; nil until the first arrives.
	Snap *model.Snapshot
	// Bond is the selected bond's name; "" while none is chosen.
	Bond   string
	Sort   SortOrder
	Window time.Duration
	// Paused freezes what is shown; snapshots that arrive meanwhile are
	// held and shown, with their events, on resume.
	Paused bool
	// Playback is set when the feed is a recording (a Player): pausing
	// stops the playback itself, and a snapshot that arrives while paused
	// is the user's own seek, shown at once.
	Playback bool
	// Interval is the sampler's pace, shown in the header.
	Interval time.Duration
	// Events is the log, newest first.
	Events []model.Event
	// SourceErr is set when the sampler stopped (the host became
	// unreadable); the last snapshot stays on screen.
	SourceErr error

	held       *model.Snapshot
	heldEvents []model.Event
	// goneAt is when each bond that vanished mid-run was last missed.
	goneAt map[string]time.Time
	// known lists every bond seen, so a vanished bond stays selectable;
	// lastSeen keeps each one's latest sample for the graphs' legend.
	known    []string
	lastSeen map[string]seenSample

	// release, when set, hands back a snapshot the model no longer
	// points into: the feed fills it again (a Recycler). kept are the
	// snapshots it points into: Snap, held and those of lastSeen.
	release func(*model.Snapshot)
	kept    []*model.Snapshot
}

// seenSample is a bond's latest sample and the snapshot it is in.
type seenSample struct {
	sample *model.BondSample
	in     *model.Snapshot
}

// NewModel returns an empty model: enslave order, the shortest window.
func NewModel(interval time.Duration) *Model {
	return &Model{
		Window: GraphWindows[0], Interval: interval,
		goneAt: make(map[string]time.Time), lastSeen: make(map[string]seenSample),
	}
}

// Apply takes a new snapshot. While paused it is held back; its events are
// kept for the log all the same.
func (m *Model) Apply(s *model.Snapshot) {
	if m.release != nil && !slices.Contains(m.kept, s) {
		m.kept = append(m.kept, s)
	}
	defer m.letGo()
	if m.Paused && !m.Playback {
		m.held = s
		// Newest snapshot's events first, as the log keeps them.
		m.heldEvents = append(slices.Clone(s.Events), m.heldEvents...)
		return
	}
	m.show(s, s.Events)
}

// letGo hands back the snapshots the model no longer points into.
func (m *Model) letGo() {
	kept := m.kept[:0]
	for _, s := range m.kept {
		if m.pointsInto(s) {
			kept = append(kept, s)
		} else {
			m.release(s)
		}
	}
	clear(m.kept[len(kept):])
	m.kept = kept
}

// pointsInto reports whether the model still reads s: on screen, held
// behind the pause, or the last sample of a bond that went away.
func (m *Model) pointsInto(s *model.Snapshot) bool {
	if s == m.Snap || s == m.held {
		return true
	}
	for _, seen := range m.lastSeen {
		if seen.in == s {
			return true
		}
	}
	return false
}

func (m *Model) show(s *model.Snapshot, events []model.Event) {
	m.Snap = s
	for i := range s.Bonds {
		name := s.Bonds[i].Name
		m.lastSeen[name] = seenSample{&s.Bonds[i], s}
		delete(m.goneAt, name)
		m.addKnown(name)
	}
	for _, e := range events {
		if e.Kind == model.EventBondGone {
			m.goneAt[e.Bond] = e.Time
		}
	}
	for _, name := range s.Missing {
		if _, ok := m.goneAt[name]; !ok {
			m.goneAt[name] = s.Time
		}
		m.addKnown(name)
	}
	if m.Bond == "" && len(s.Bonds) == 1 {
		// The only bond there is: nothing to choose.
		m.Bond = s.Bonds[0].Name
	}
	m.addEvents(events)
}

// addEvents puts a snapshot's events at the top of the log. The log is
// newest first across snapshots; within one snapshot the collector's order
// (bond before slaves: "failover", then "eth0 link down") reads better
// than reversed, and they share a time anyway.
func (m *Model) addEvents(events []model.Event) {
	if len(events) == 0 {
		return
	}
	fresh := make([]model.Event, 0, len(events)+len(m.Events))
	fresh = append(fresh, events...)
	fresh = append(fresh, m.Events...)
	if len(fresh) > maxEvents {
		fresh = fresh[:maxEvents]
	}
	m.Events = fresh
}

// TogglePause pauses, or resumes and shows what arrived meanwhile.
func (m *Model) TogglePause() {
	m.Paused = !m.Paused
	if !m.Paused && m.held != nil {
		s, evs := m.held, m.heldEvents
		m.held, m.heldEvents = nil, nil
		m.show(s, evs)
		m.letGo()
	}
}

// HeldEvents is how many events wait behind the pause.
func (m *Model) HeldEvents() int { return len(m.heldEvents) }

// Bonds lists the bonds to choose from, by name: those in the snapshot and
// those that vanished while followed.
func (m *Model) Bonds() []string { return m.known }

// addKnown adds a bond to Bonds, kept in natural order (bond2 before
// bond10) so the list, [ ] and 1-9 agree with how names read.
func (m *Model) addKnown(name string) {
	if i, found := slices.BinarySearchFunc(m.known, name, natural.Compare); !found {
		m.known = slices.Insert(m.known, i, name)
	}
}

// SelectBondNamed selects the bond called name; false when it is not in
// Bonds.
func (m *Model) SelectBondNamed(name string) bool {
	if !slices.Contains(m.known, name) {
		return false
	}
	m.Bond = name
	return true
}

// SelectBond selects the i-th bond of Bonds (0-based); false when there is
// no such bond.
func (m *Model) SelectBond(i int) bool {
	if i < 0 || i >= len(m.known) {
		return false
	}
	m.Bond = m.known[i]
	return true
}

// StepBond moves the selection by delta bonds, wrapping around.
func (m *Model) StepBond(delta int) {
	n := len(m.known)
	if n == 0 {
		return
	}
	i := slices.Index(m.known, m.Bond)
	if i < 0 {
		i = 0
		if delta > 0 {
			delta--
		}
	}
	m.Bond = m.known[((i+delta)%n+n)%n]
}

// BondIndex is the selected bond's position in Bonds, or -1.
func (m *Model) BondIndex() int { return slices.Index(m.known, m.Bond) }

// Selected is the selected bond in the snapshot on screen, or nil (none
// chosen, or gone).
func (m *Model) Selected() *model.BondSample {
	if m.Snap == nil || m.Bond == "" {
		return nil
	}
	return m.Snap.Bond(m.Bond)
}

// LastSeen is the selected bond as last sampled: the snapshot's, or for a
// bond that vanished, its last sample (the graphs keep showing its
// history). nil when none was ever seen.
func (m *Model) LastSeen() *model.BondSample {
	if b := m.Selected(); b != nil {
		return b
	}
	return m.lastSeen[m.Bond].sample
}

// GoneSince reports when the selected bond vanished, if it did.
func (m *Model) GoneSince() (time.Time, bool) {
	t, ok := m.goneAt[m.Bond]
	return t, ok && m.Bond != ""
}

// CycleSort moves to the next sort order.
func (m *Model) CycleSort() { m.Sort = (m.Sort + 1) % numSortOrders }

// CycleWindow moves to the next graph window.
func (m *Model) CycleWindow() {
	i := slices.Index(GraphWindows, m.Window)
	m.Window = GraphWindows[(i+1)%len(GraphWindows)]
}

// SlaveRow is a slave as the table lists it: the sample and its position
// in the kernel's enslave order (which keys its colour).
type SlaveRow struct {
	*model.SlaveSample
	Index int
}

// Rows are the selected bond's slaves in the chosen order. Ties keep
// enslave order, so rows do not jump between equal values.
func (m *Model) Rows() []SlaveRow {
	b := m.Selected()
	if b == nil {
		return nil
	}
	rows := make([]SlaveRow, len(b.Slaves))
	for i := range b.Slaves {
		rows[i] = SlaveRow{&b.Slaves[i], i}
	}
	desc := func(a, b *float64) int { return cmp.Compare(orZero(b), orZero(a)) }
	slices.SortStableFunc(rows, func(a, b SlaveRow) int {
		switch m.Sort {
		case SortRx:
			return desc(a.RxBps, b.RxBps)
		case SortTx:
			return desc(a.TxBps, b.TxBps)
		case SortErrors:
			return cmp.Compare(errorTotal(b.Interval), errorTotal(a.Interval))
		case SortName:
			return cmp.Compare(a.Name, b.Name)
		}
		return 0
	})
	return rows
}

func orZero(p *float64) float64 {
	if p == nil {
		return -1 // unknown sorts below a real zero
	}
	return *p
}

func errorTotal(iv *model.ErrorCounts) uint64 {
	if iv == nil {
		return 0
	}
	var n uint64
	for _, p := range []*uint64{iv.RxErrors, iv.TxErrors, iv.RxDropped, iv.TxDropped, iv.RxOverErrors, iv.RxFifoErrors} {
		if p != nil {
			n += *p
		}
	}
	return n
}
