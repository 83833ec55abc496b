package collector

import (
	"errors"
	"slices"

	"github.com/bondtop/bondtop/collector/neighbors"
)

// NeighborReader tells what the far end of each slave's cable says about
// itself (LLDP, CDP). The live source is one; so is the demo.
type NeighborReader interface {
	// Watch follows exactly these slaves; the error says why some could
	// not be listened on (neighbors.ErrNoPermission among them).
	Watch(slaves []string) error
	// Neighbor is the slave's live neighbour, nil when none was heard or
	// its TTL ran out.
	Neighbor(slave string) *neighbors.Neighbor
}

// SwitchSide is what a slave's far end says, present in a SlaveSample only
// when the source listens (a --root tree or a replay of an older recording
// has none, and then the keys are absent rather than null).
type SwitchSide struct {
	// Neighbor is the LLDP or CDP neighbour heard on the slave; nil when
	// none was heard (or listening failed: BondSample.NeighborsWhy).
	Neighbor *neighbors.Neighbor `json:"neighbor"`
}

// neighborTracker keeps the reader's watch list in step with the followed
// bonds' slaves and copies each slave's neighbour into the snapshot.
type neighborTracker struct {
	r        NeighborReader
	watching []string
	why      string // why listening failed on the watched slaves, "" if it did not
}

func (t *neighborTracker) attach(snap *Snapshot) {
	var names []string
	for i := range snap.Bonds {
		for j := range snap.Bonds[i].Slaves {
			names = append(names, snap.Bonds[i].Slaves[j].Name)
		}
	}
	slices.Sort(names)
	// Only a changed slave list is retried: a missing capability does not
	// appear between two ticks, and a failed open costs syscalls.
	if t.watching == nil || !slices.Equal(names, t.watching) {
		t.watching = append([]string{}, names...)
		t.why = ""
		if err := t.r.Watch(names); errors.Is(err, neighbors.ErrNoPermission) {
			t.why = neighbors.ErrNoPermission.Error()
		} else if err != nil {
			t.why = err.Error()
		}
	}
	for i := range snap.Bonds {
		b := &snap.Bonds[i]
		if t.why != "" {
			why := t.why
			b.NeighborsWhy = &why
		}
		for j := range b.Slaves {
			sl := &b.Slaves[j]
			sl.SwitchSide = &SwitchSide{Neighbor: t.r.Neighbor(sl.Name)}
		}
	}
}
