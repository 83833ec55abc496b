package collector

import (
	"sync"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// firstOf is the first element of arr's array (arr may be empty; its
// capacity may not be): two slices share an array when they share it.
func firstOf[T any](arr []T) *T { return &arr[:1][0] }

// sameArray reports whether a and b are the same reading's bonds.
func sameArray(a, b []bonding.Bond) bool {
	return cap(a) > 0 && cap(b) > 0 && firstOf(a) == firstOf(b)
}

// LentSnapshots is how many of the snapshots it made a Sampler
// remembers. Snapshots handed back (Options.Recycle, Sampler.Release) are
// filled again by a later tick: the Snapshot itself, its bonds' array,
// the array of all their slaves, the rooms of their numbers and of their
// switch sides, its lists of events, notes and warnings. A steady tick
// then allocates nothing. One handed back after the Sampler forgot it is
// left to the garbage collector, as is every snapshot when the consumer
// never hands any back.
const LentSnapshots = 8

// snapshotStore is what a Sampler lent and what came back. The consumer
// hands snapshots back from its own goroutine (a UI's event loop), so it
// locks.
type snapshotStore struct {
	mu   sync.Mutex
	lent [LentSnapshots]lentSnapshot
	next int // the slot the next new snapshot takes when none is back
}

// lentSnapshot is a snapshot the Sampler made and the arrays it made for
// it, as made: a consumer may have resliced the snapshot's own fields.
type lentSnapshot struct {
	snap   *model.Snapshot
	bonds  []model.BondSample
	slaves []model.SlaveSample
	// nSlaves is how many of slaves the snapshot has (slavesFor): the
	// size of its switch sides' and predictions' arrays too.
	nSlaves int
	rooms   []numberRoom
	sides   []sideRoom
	// The slaves' predicted traffic and its rates (flowTracker.attach).
	predicted []model.Predicted
	rates     []float64
	// The snapshot's lists as the last tick that filled it left them:
	// appends reuse their arrays (keep stores them back).
	events   []model.Event
	notes    []string
	warnings []string
	missing  []string
	back     bool // handed back: the next take fills it again
}

// take returns a zeroed Snapshot and the slot that holds its arrays: one
// handed back when there is one, else a new one in the oldest slot (the
// snapshot that was there is forgotten, and stays with whoever has it).
func (st *snapshotStore) take() (*model.Snapshot, *lentSnapshot) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := range st.lent {
		if l := &st.lent[i]; l.back {
			l.back, l.nSlaves = false, 0
			*l.snap = model.Snapshot{}
			return l.snap, l
		}
	}
	l := &st.lent[st.next]
	st.next = (st.next + 1) % LentSnapshots
	*l = lentSnapshot{snap: new(model.Snapshot)}
	return l.snap, l
}

// release marks snap handed back, when this store lent it and still
// remembers it. Handing the same snapshot back twice is a consumer's
// mistake that would let two ticks fill one snapshot: it panics.
func (st *snapshotStore) release(snap *model.Snapshot) {
	if snap == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := range st.lent {
		if l := &st.lent[i]; l.snap == snap {
			if l.back {
				panic("collector: a Snapshot handed back twice")
			}
			l.back = true
			return
		}
	}
}

// startLists gives snap its lists, empty: the slot's own arrays, to
// append to. Events is never nil (JSON says [] rather than null). The
// warnings start as the reading's: a snapshot not filled again shares
// them, one that is gets a copy in its own array, which later appends
// (the flow table's, the configuration's) must not share with the
// reading.
func (l *lentSnapshot) startLists(snap *model.Snapshot, pending []model.Event, warnings []string) {
	if l.snap == nil {
		snap.Events, snap.Warnings = append([]model.Event{}, pending...), warnings
		return
	}
	snap.Events = append(l.events[:0], pending...)
	if snap.Events == nil {
		snap.Events = []model.Event{}
	}
	snap.Warnings = append(l.warnings[:0], warnings...)
	snap.Notes, snap.Missing = l.notes[:0], l.missing[:0]
}

// keep stores back the arrays snap's lists grew into, for the next tick
// that fills it.
func (l *lentSnapshot) keep(snap *model.Snapshot) {
	if l.snap != nil {
		l.events, l.notes, l.warnings, l.missing = snap.Events, snap.Notes, snap.Warnings, snap.Missing
	}
}

// bondsFor returns an empty array with room for n bond samples: the
// slot's own when it is large enough.
func (l *lentSnapshot) bondsFor(n int) []model.BondSample {
	if cap(l.bonds) < n {
		l.bonds = make([]model.BondSample, 0, n)
	}
	clear(l.bonds[:cap(l.bonds)])
	return l.bonds[:0]
}

// slavesFor returns n zeroed slave samples.
func (l *lentSnapshot) slavesFor(n int) []model.SlaveSample {
	if cap(l.slaves) < n {
		l.slaves = make([]model.SlaveSample, n)
	}
	all := l.slaves[:n]
	clear(all)
	l.nSlaves = n
	return all
}

// sideRooms returns empty rooms for the switch sides of the snapshot's
// slaves; nil when it is not filled again (newSnapshot without Recycle:
// the neighbour tracker then shares sides between snapshots).
func (l *lentSnapshot) sideRooms() []sideRoom {
	if l.snap == nil {
		return nil
	}
	if cap(l.sides) < l.nSlaves {
		l.sides = make([]sideRoom, 0, l.nSlaves)
	}
	return l.sides[:0]
}

// predictions returns empty arrays with room for the snapshot's slaves'
// predicted traffic and rates: the slot's own, or new ones for a
// snapshot that is not filled again.
func (l *lentSnapshot) predictions() ([]model.Predicted, []float64) {
	if n := l.nSlaves; cap(l.predicted) < n {
		l.predicted, l.rates = make([]model.Predicted, 0, n), make([]float64, 0, n)
	}
	return l.predicted[:0], l.rates[:0]
}

// numbersFor returns numbers with n rooms.
func (l *lentSnapshot) numbersFor(n int) *numbers {
	if cap(l.rooms) < n {
		l.rooms = make([]numberRoom, 0, n)
	}
	return &numbers{rooms: l.rooms[:0]}
}
