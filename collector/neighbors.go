package collector

import (
	"errors"
	"slices"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/bondtop/bondtop/model"
)

// lacpduEvery is how often the Sampler asks for the LACPDU counters at a
// pace faster than it (at a second or slower, every tick). Asking more
// often costs the kernel a request a tick and tells nothing more: a
// partner sends a LACPDU a second (lacp_rate fast; every 30 s slow, and
// a few more only when its state changes), so a faster read could only
// repeat the last answer or see the same rise a fraction of a second
// sooner. Nothing makes rates of them. What is told from them keeps to
// the time they were read (lacpduSample): the "no LACPDU" finding (more
// than 3 s at fast, 90 s at slow) judges the silence the last read saw,
// which is never more than there was, at most a second late; the
// diagnosis' count of illegal and unknown LACPDUs compares two reads; the
// switch-side panel, the JSON and the metrics show counters at most a
// second old, which never go back. The packet socket's age of the last
// LACPDU, when it heard one, is exact and counts to every tick; the
// carrier counts come with every tick's link dump.
const lacpduEvery = time.Second

// neighborTracker keeps the reader's watch list in step with the followed
// bonds' slaves and copies each slave's neighbour and port counters into
// the snapshot. Either reader may be nil.
//
// A slave's SwitchSide, and its LACPDUSample, are shared with the last
// snapshot while nothing in them changed (they are never written once
// handed out): a steady tick allocates none. When the snapshots are
// filled again (Options.Recycle) nothing is shared: each snapshot has
// its slaves' switch sides in rooms of its own, which come back with it.
type neighborTracker struct {
	r        NeighborReader
	counters PortCounterReader
	firmware FirmwareLLDPReader
	fwAgent  map[string]*bool // per watched slave, read when the list changes
	watching []string
	why      string   // why listening failed on the watched slaves, "" if it did not
	whyPtr   *string  // why, as the snapshots' bonds point to it (never modified)
	names    []string // scratch: the snapshot's slaves
	// slaves is what is kept of each slave of the last snapshot, by name.
	slaves map[string]*slaveSides
	tick   uint64 // counts attach calls; slaveSides.seen holds the last one
	// The LACPDU counters as last read, when (the snapshot's time), and
	// for which slaves; carriers is the carrier counts' scratch.
	lacpdus   map[string]bonding.LACPDUCounters
	lacpduAt  time.Time
	lacpduFor []string
	carriers  map[string]*bonding.CarrierCounts
	// Scratch for the reader to copy into (a local would escape through
	// the interface): a slave's neighbour, the LACPDU it last heard.
	nb    neighbors.Neighbor
	heard neighbors.LACPDU
	// heardAt is this tick's time.Now, which the reader's ages count
	// to: one clock read a tick, not two a slave (a clock that is no
	// vDSO read, such as HPET, costs microseconds a read).
	heardAt time.Time
}

// slaveSides is what the tracker keeps of one slave between ticks.
type slaveSides struct {
	// side is the last one handed out, shared while nothing in it
	// changed; nil before the first, and when snapshots are filled again.
	side *model.SwitchSide
	// pdu is the slave's LACPDU sample as last made, in the tracker's
	// own memory (a room gets a copy): hasPDU says there is one, pduAge
	// that its LastRxAgeSeconds is known (a room points it to its age).
	pdu            lacpduRoom
	hasPDU, pduAge bool
	rx             *rxWatch // nil while the slave has no LACPDU counters
	seen           uint64   // the tick that last saw the slave
}

// rxWatch follows one slave's LACPDU rx counter, from read to read.
type rxWatch struct {
	counters bonding.LACPDUCounters // as last read
	readAt   time.Time              // when they were read
	since    time.Time              // when rx last rose (the read that saw it), or when watching began
	after    time.Time              // the read before since's: the rise came after it
	moved    bool                   // rx rose while watched: since is a real arrival
}

// slaveNames lists the snapshot's slaves in t.names, which the next call
// reuses.
func (t *neighborTracker) slaveNames(snap *model.Snapshot) []string {
	t.names = t.names[:0]
	for i := range snap.Bonds {
		for j := range snap.Bonds[i].Slaves {
			t.names = append(t.names, snap.Bonds[i].Slaves[j].Name)
		}
	}
	return t.names
}

// switchSides hands out the room for the SwitchSides (and LACPDU
// samples) a tick makes anew, from one array made on the first need: a
// tick allocates at most once, and a steady one not at all. When own is
// set the rooms are the snapshot's own, handed back with it, with one
// for each slave: every side is made anew, and none is shared.
type switchSides struct {
	n     int // the snapshot's slaves
	rooms []sideRoom
	own   bool
}

// sideRoom is a slave's SwitchSide and the neighbour and LACPDU sample
// it may point to.
type sideRoom struct {
	side model.SwitchSide
	nb   neighbors.Neighbor
	pdu  lacpduRoom
}

// lacpduRoom is a slave's LACPDUSample and the age it may point to.
type lacpduRoom struct {
	sample model.LACPDUSample
	age    float64
}

func (ss *switchSides) take() *sideRoom {
	if len(ss.rooms) == cap(ss.rooms) { // never when own
		ss.rooms = make([]sideRoom, 0, max(ss.n-len(ss.rooms), 1))
	}
	ss.rooms = append(ss.rooms, sideRoom{})
	return &ss.rooms[len(ss.rooms)-1]
}

func newNeighborTracker(r NeighborReader, c PortCounterReader) *neighborTracker {
	return &neighborTracker{r: r, counters: c, slaves: make(map[string]*slaveSides),
		lacpdus: make(map[string]bonding.LACPDUCounters), carriers: make(map[string]*bonding.CarrierCounts)}
}

// attach gives each slave of snap its SwitchSide; interval is the pace in
// force, which tells whether this tick reads the LACPDU counters.
//
// rooms, when not nil, are the snapshot's own rooms for its switch sides,
// empty, with room for every slave (Options.Recycle).
func (t *neighborTracker) attach(snap *model.Snapshot, interval time.Duration, rooms []sideRoom) {
	t.tick++
	names := t.slaveNames(snap)
	if t.r != nil {
		t.watch(names)
		t.heardAt = time.Now()
	}
	if t.counters != nil {
		clear(t.carriers)
		t.counters.CarrierCounts(names, t.carriers)
		if t.lacpduDue(snap.Time, names, interval) {
			t.readLACPDUs(snap.Time, names)
		}
	}
	sides := switchSides{n: len(names), rooms: rooms, own: rooms != nil}
	for i := range snap.Bonds {
		b := &snap.Bonds[i]
		if t.r != nil {
			b.NeighborsWhy = t.whyPtr
		}
		for j := range b.Slaves {
			sl := &b.Slaves[j]
			k := t.slaves[sl.Name]
			if k == nil {
				k = &slaveSides{}
				t.slaves[sl.Name] = k
			}
			k.seen = t.tick
			sl.SwitchSide = t.side(snap.Time, sl.Name, k, &sides)
		}
	}
	for name, k := range t.slaves {
		if k.seen != t.tick {
			delete(t.slaves, name)
		}
	}
}

// watch follows the slaves names (in snapshot order) with the neighbour
// reader. Only a changed slave list is retried: a missing capability does
// not appear between two ticks, and a failed open costs syscalls.
func (t *neighborTracker) watch(names []string) {
	if t.watching != nil && len(names) == len(t.watching) {
		same := true
		for _, n := range names {
			if _, found := slices.BinarySearch(t.watching, n); !found {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	t.watching = slices.Clone(names)
	slices.Sort(t.watching)
	t.why, t.whyPtr = "", nil
	t.fwAgent = map[string]*bool{}
	if t.firmware != nil {
		for _, n := range t.watching {
			if agent, known := t.firmware.FirmwareLLDP(n); known {
				t.fwAgent[n] = &agent
			}
		}
	}
	if err := t.r.Watch(t.watching); errors.Is(err, neighbors.ErrNoPermission) {
		t.why = neighbors.ErrNoPermission.Error()
	} else if err != nil {
		t.why = err.Error()
	}
	if t.why != "" {
		why := t.why
		t.whyPtr = &why
	}
}

// lacpduDue reports whether the tick at now reads the LACPDU counters:
// the first, one whose slaves changed, and then one a lacpduEvery
// (dueEvery).
func (t *neighborTracker) lacpduDue(now time.Time, names []string, interval time.Duration) bool {
	return !slices.Equal(names, t.lacpduFor) || dueEvery(t.lacpduAt, now, lacpduEvery, interval)
}

// readLACPDUs asks for the slaves' LACPDU counters and follows each
// slave's rx counter: the read that sees it rise is the time of the
// arrival, as well as it is known. A slave without counters (another
// mode, an old kernel) stops being followed.
func (t *neighborTracker) readLACPDUs(now time.Time, names []string) {
	clear(t.lacpdus)
	t.counters.LACPDUCounters(names, t.lacpdus)
	t.lacpduAt = now
	t.lacpduFor = append(t.lacpduFor[:0], names...)
	for _, name := range names {
		k := t.slaves[name]
		if k == nil {
			k = &slaveSides{}
			t.slaves[name] = k
		}
		c, ok := t.lacpdus[name]
		if !ok {
			k.rx = nil
			continue
		}
		w := k.rx
		switch {
		case w == nil || c.Rx < w.counters.Rx: // new, or counters reset
			w = &rxWatch{since: now}
			k.rx = w
		case c.Rx > w.counters.Rx:
			w.after, w.since, w.moved = w.readAt, now, true
		}
		w.counters, w.readAt = c, now
	}
}

// side is the slave's SwitchSide at now: the last one when nothing in it
// changed, else one in a room of sides (always, when they are own).
func (t *neighborTracker) side(now time.Time, name string, k *slaveSides, sides *switchSides) *model.SwitchSide {
	var heard bool
	var fw *bool
	carrier, counted := t.carriers[name]
	if t.r != nil {
		// A neighbour heard is copied with its age of now: a new
		// SwitchSide every tick for its slave.
		heard, fw = t.r.Neighbor(name, t.heardAt, &t.nb), t.fwAgent[name]
	} else if !counted && k.rx == nil {
		k.side, k.hasPDU = nil, false
		return nil // a source that listens to nothing, and no counters
	}
	changed := t.lacpduSample(now, name, k)
	if last := k.side; !sides.own && !changed && !heard && last != nil && last.Neighbor == nil &&
		last.Carrier == carrier && last.FirmwareLLDPAgent == fw && (last.LACPDU != nil) == k.hasPDU {
		return last
	}
	room := sides.take()
	room.side = model.SwitchSide{Carrier: carrier, FirmwareLLDPAgent: fw}
	if heard {
		room.nb = t.nb
		room.side.Neighbor = &room.nb
	}
	if k.hasPDU {
		room.pdu = k.pdu
		if k.pduAge {
			room.pdu.sample.LastRxAgeSeconds = &room.pdu.age
		}
		room.side.LACPDU = &room.pdu.sample
	}
	k.side = &room.side
	if sides.own {
		k.side = nil // the room goes back with its snapshot
	}
	return &room.side
}

// lacpduSample brings k.pdu to the slave's LACPDU sample at now, and
// reports whether it says something else than the last one (hasPDU false:
// the slave has no LACPDU counters). The counters and what is told from
// them are as of their read: SilentSeconds is the silence the last read
// saw (at least that long no LACPDU had arrived then), the age that
// read's. The packet socket, when it heard one, knows the arrival to the
// tick: its age counts to now. k.pduAge says whether the sample's
// LastRxAgeSeconds is to point to its age (it is nil in k.pdu: each room
// points it to its own).
func (t *neighborTracker) lacpduSample(now time.Time, name string, k *slaveSides) (changed bool) {
	w := k.rx
	if w == nil {
		k.hasPDU = false
		return false
	}
	var last *lacpduRoom
	if k.hasPDU {
		last = &k.pdu
	}
	var want lacpduRoom
	ls := &want.sample
	silent := w.readAt.Sub(w.since).Seconds()
	ls.LACPDUCounters, ls.SilentSeconds = w.counters, silent
	hasAge := w.moved
	want.age = silent
	if t.r != nil {
		// The socket's age is exact, unless it missed the LACPDU that
		// the counters saw arrive (between two reads), and any later.
		if age, ok := t.r.LACPDUAge(name, t.heardAt); ok && (!hasAge || !now.Add(-age).Before(w.after)) {
			want.age, hasAge = age.Seconds(), true
			ls.SilentSeconds = want.age
		}
		// The partner's view of us changes with its configuration only:
		// taken at the counters' read, once a second, and a new one
		// kept only when it changed.
		if w.readAt.Equal(now) {
			if t.r.HeardLACPDU(name, &t.heard) {
				if last != nil && last.sample.PartnerView != nil && *last.sample.PartnerView == t.heard.Partner {
					ls.PartnerView = last.sample.PartnerView
				} else {
					view := t.heard.Partner
					ls.PartnerView = &view
				}
			}
		} else if last != nil {
			ls.PartnerView = last.sample.PartnerView
		}
	}
	if last != nil && last.sample.LACPDUCounters == ls.LACPDUCounters &&
		last.sample.SilentSeconds == ls.SilentSeconds && last.sample.PartnerView == ls.PartnerView &&
		k.pduAge == hasAge && (!hasAge || last.age == want.age) {
		return false
	}
	k.pdu, k.hasPDU, k.pduAge = want, true, hasAge
	return true
}
