package collector

import (
	"slices"
	"sync"
	"time"

	"github.com/bondtop/bondtop/model"
)

// DefaultPhysicalInterval is how often each slave's physical layer (link
// state, FEC, module EEPROM) is re-read: a module's EEPROM sits behind a
// slow i2c bus on many NICs (tens to hundreds of milliseconds a page),
// and light levels and temperatures move slowly.
const DefaultPhysicalInterval = 10 * time.Second

// physNeedsRoot is the note when module diagnostics need root.
const physNeedsRoot = "not root: SFP/QSFP module diagnostics (ethtool -m: light levels, temperature) need CAP_NET_ADMIN"

// physSyncBudget is how long a whole read may have taken to be done on
// the sampling goroutine the next time: veth, virtio and the demo answer
// in microseconds; a NIC whose module sits behind i2c takes milliseconds
// a page and is read in the background.
const physSyncBudget = 5 * time.Millisecond

// physTracker reads the slaves' physical layer rarely and copies the
// latest reading into every snapshot. The first reading happens on the
// sampling goroutine, so the first snapshot (and --once) has it; later
// ones too while reads stay within physSyncBudget, else in the
// background, so a slow NIC never delays a tick.
type physTracker struct {
	r     PhysicalReader
	every time.Duration

	mu       sync.Mutex
	latest   map[string]*model.Physical
	needRoot bool
	readAt   time.Time // when the last background read started
	running  bool
	// links is the slaves' MII status at the last read: a change makes a
	// read due at once, so the link state follows a failover within a
	// tick rather than the interval.
	links string
	// linkBuf is where attach writes the slaves' MII status each tick, to
	// compare with links without making a string of it.
	linkBuf []byte
	// took is how long the last read took.
	took time.Duration
	wg   sync.WaitGroup
}

func newPhysTracker(r PhysicalReader) *physTracker {
	return &physTracker{r: r, every: DefaultPhysicalInterval, latest: map[string]*model.Physical{}}
}

// read reads the named slaves and stores what it got.
func (t *physTracker) read(names []string) {
	start := time.Now()
	got := make(map[string]*model.Physical, len(names))
	needRoot := false
	for _, n := range names {
		p, nr := t.r.Physical(n)
		needRoot = needRoot || nr
		if !p.Empty() {
			got[n] = p
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range names {
		if p, ok := got[n]; ok {
			t.latest[n] = p
		} else {
			delete(t.latest, n)
		}
	}
	t.needRoot = needRoot
	t.running = false
	t.took = time.Since(start)
}

// attach gives each slave of snap its latest physical reading, starting a
// read when one is due.
func (t *physTracker) attach(now time.Time, snap *model.Snapshot) {
	t.linkBuf = t.linkBuf[:0]
	for i := range snap.Bonds {
		for j := range snap.Bonds[i].Slaves {
			sl := &snap.Bonds[i].Slaves[j]
			t.linkBuf = append(append(append(append(t.linkBuf, sl.Name...), '='), str(sl.MIIStatus)...), ' ')
		}
	}
	t.mu.Lock()
	inline := t.readAt.IsZero() || t.took <= physSyncBudget
	due := !t.running && (now.Sub(t.readAt) >= t.every || string(t.linkBuf) != t.links)
	if due {
		t.readAt, t.running, t.links = now, true, string(t.linkBuf)
	}
	t.mu.Unlock()
	// The names are listed only for a read, which may keep them.
	var names []string
	if due {
		for i := range snap.Bonds {
			for j := range snap.Bonds[i].Slaves {
				names = append(names, snap.Bonds[i].Slaves[j].Name)
			}
		}
	}
	switch {
	case due && inline:
		t.read(names)
	case due:
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			t.read(names)
		}()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range snap.Bonds {
		for j := range snap.Bonds[i].Slaves {
			sl := &snap.Bonds[i].Slaves[j]
			sl.Physical = t.latest[sl.Name]
		}
	}
	if t.needRoot && !slices.Contains(snap.Notes, physNeedsRoot) {
		snap.Notes = append(snap.Notes, physNeedsRoot)
	}
}
