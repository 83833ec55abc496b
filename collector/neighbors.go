package collector

import (
	"errors"
	"slices"
	"time"

	"github.com/bondtop/bondtop/bonding"
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
	// LACPDUAge is the time since a LACPDU or marker last arrived on the
	// slave; ok is false when none did since listening began.
	LACPDUAge(slave string) (age time.Duration, ok bool)
	// HeardLACPDU is the last LACPDU the slave received, nil when none
	// was heard (or listening failed).
	HeardLACPDU(slave string) *neighbors.LACPDU
}

// FirmwareLLDPReader tells whether a slave's NIC runs an LLDP agent in
// its firmware (the live source, from the driver's private flags).
type FirmwareLLDPReader interface {
	FirmwareLLDP(slave string) (agent, known bool)
}

// firmwareLLDPAgent reads a driver's private flags: i40e's
// "disable-fw-lldp" off, or ice's "fw-lldp-agent" on, is a firmware agent.
func firmwareLLDPAgent(flags map[string]bool) (agent, known bool) {
	if off, ok := flags["disable-fw-lldp"]; ok {
		return !off, true
	}
	if on, ok := flags["fw-lldp-agent"]; ok {
		return on, true
	}
	return false, false
}

// PortCounterReader gives each slave's LACPDU counters and carrier
// transitions (the live source).
type PortCounterReader interface {
	PortCounters(slaves []string) map[string]PortCounters
}

// PortCounters are one slave's kernel counters of the LACP conversation and
// the physical link; nil where the kernel gave none.
type PortCounters struct {
	LACPDU  *bonding.LACPDUCounters
	Carrier *bonding.CarrierCounts
}

// LACPDUSample is a slave's LACPDU and marker counters with the time since
// the last LACPDU arrived.
type LACPDUSample struct {
	bonding.LACPDUCounters
	// LastRxAgeSeconds is the time since a LACPDU last arrived, seen by
	// the packet socket or from the rx counter's last rise; nil when
	// neither has seen one since bondtop started.
	LastRxAgeSeconds *float64 `json:"last_rx_age_s"`
	// PartnerView is the partner's view of our port, as its last LACPDU
	// said; absent when no packet socket heard one.
	PartnerView *neighbors.LACPPort `json:"partner_view,omitempty"`
	// SilentSeconds is at least how long no LACPDU arrived: the age when
	// known, else the time the rx counter has stood still while watched.
	SilentSeconds float64 `json:"-"`
}

// SwitchSide is what a slave's far end says, present in a SlaveSample only
// when the source listens (a --root tree or a replay of an older recording
// has none, and then the keys are absent rather than null).
type SwitchSide struct {
	// Neighbor is the LLDP or CDP neighbour heard on the slave; nil when
	// none was heard (or listening failed: BondSample.NeighborsWhy).
	Neighbor *neighbors.Neighbor `json:"neighbor"`
	// LACPDU is the 802.3ad conversation's counters; absent for slaves of
	// bonds in other modes and on kernels before 4.19.
	LACPDU *LACPDUSample `json:"lacpdu,omitempty"`
	// Carrier counts link transitions (4.16+); absent where not reported.
	Carrier *bonding.CarrierCounts `json:"carrier,omitempty"`
	// FirmwareLLDPAgent is set when the NIC's firmware runs an LLDP agent
	// that consumes the switch's frames; absent when the driver has no
	// such flag.
	FirmwareLLDPAgent *bool `json:"firmware_lldp_agent,omitempty"`
}

// neighborTracker keeps the reader's watch list in step with the followed
// bonds' slaves and copies each slave's neighbour and port counters into
// the snapshot. Either reader may be nil.
type neighborTracker struct {
	r        NeighborReader
	counters PortCounterReader
	firmware FirmwareLLDPReader
	fwAgent  map[string]*bool // per watched slave, read when the list changes
	watching []string
	why      string  // why listening failed on the watched slaves, "" if it did not
	whyPtr   *string // why, as the snapshots' bonds point to it (never modified)
	lacpRx   map[string]*rxWatch
	names    []string // scratch: the snapshot's slaves
}

// slaveNames lists the snapshot's slaves in t.names, which the next call
// reuses.
func (t *neighborTracker) slaveNames(snap *Snapshot) []string {
	t.names = t.names[:0]
	for i := range snap.Bonds {
		for j := range snap.Bonds[i].Slaves {
			t.names = append(t.names, snap.Bonds[i].Slaves[j].Name)
		}
	}
	return t.names
}

// switchSides is one array for the SwitchSide of every slave of snap, so
// that a tick allocates it once rather than once per slave; next hands
// them out in turn.
type switchSides struct {
	sides []SwitchSide
	pdus  []lacpduRoom
}

// lacpduRoom is a slave's LACPDUSample and the age it may point to.
type lacpduRoom struct {
	sample LACPDUSample
	age    float64
}

func newSwitchSides(snap *Snapshot) *switchSides {
	n := 0
	for i := range snap.Bonds {
		n += len(snap.Bonds[i].Slaves)
	}
	return &switchSides{sides: make([]SwitchSide, 0, n)}
}

func (ss *switchSides) next() *SwitchSide {
	if len(ss.sides) == cap(ss.sides) {
		ss.sides = make([]SwitchSide, 0, 1)
	}
	ss.sides = append(ss.sides, SwitchSide{})
	return &ss.sides[len(ss.sides)-1]
}

func (ss *switchSides) nextPDU(n int) *lacpduRoom {
	if ss.pdus == nil {
		ss.pdus = make([]lacpduRoom, 0, n)
	}
	if len(ss.pdus) == cap(ss.pdus) {
		ss.pdus = make([]lacpduRoom, 0, 1)
	}
	ss.pdus = append(ss.pdus, lacpduRoom{})
	return &ss.pdus[len(ss.pdus)-1]
}

// rxWatch follows one slave's LACPDU rx counter.
type rxWatch struct {
	rx       uint64
	since    time.Time // when rx last changed, or when watching began
	moved    bool      // rx rose while watched: since is a real arrival
	lastSeen time.Time
}

func newNeighborTracker(r NeighborReader, c PortCounterReader) *neighborTracker {
	return &neighborTracker{r: r, counters: c, lacpRx: make(map[string]*rxWatch)}
}

func (t *neighborTracker) attach(snap *Snapshot) {
	if t.r == nil {
		t.attachCounters(snap, nil)
		return
	}
	names := t.slaveNames(snap)
	slices.Sort(names)
	// Only a changed slave list is retried: a missing capability does not
	// appear between two ticks, and a failed open costs syscalls.
	if t.watching == nil || !slices.Equal(names, t.watching) {
		t.watching = append([]string{}, names...)
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
	sides := newSwitchSides(snap)
	for i := range snap.Bonds {
		b := &snap.Bonds[i]
		b.NeighborsWhy = t.whyPtr
		for j := range b.Slaves {
			sl := &b.Slaves[j]
			sl.SwitchSide = sides.next()
			*sl.SwitchSide = SwitchSide{Neighbor: t.r.Neighbor(sl.Name), FirmwareLLDPAgent: t.fwAgent[sl.Name]}
		}
	}
	t.attachCounters(snap, sides)
}

// attachCounters adds the kernel's LACPDU and carrier counters, and the
// time since the last LACPDU: the packet socket's when it heard one, else
// from the rx counter's movement.
//
// sides holds the slaves' SwitchSides when attach made them; nil, it is
// made here for those that get counters.
func (t *neighborTracker) attachCounters(snap *Snapshot, sides *switchSides) {
	if t.counters == nil {
		return
	}
	names := t.slaveNames(snap)
	if sides == nil {
		sides = newSwitchSides(snap)
	}
	pcs := t.counters.PortCounters(names)
	now := snap.Time
	for i := range snap.Bonds {
		for j := range snap.Bonds[i].Slaves {
			sl := &snap.Bonds[i].Slaves[j]
			pc, ok := pcs[sl.Name]
			if !ok {
				continue
			}
			if sl.SwitchSide == nil {
				sl.SwitchSide = sides.next()
			}
			sl.Carrier = pc.Carrier
			if pc.LACPDU == nil {
				delete(t.lacpRx, sl.Name)
				continue
			}
			w := t.lacpRx[sl.Name]
			switch {
			case w == nil || pc.LACPDU.Rx < w.rx: // new, or counters reset
				w = &rxWatch{rx: pc.LACPDU.Rx, since: now}
				t.lacpRx[sl.Name] = w
			case pc.LACPDU.Rx > w.rx:
				w.rx, w.since, w.moved = pc.LACPDU.Rx, now, true
			}
			w.lastSeen = now
			room := sides.nextPDU(len(names))
			ls := &room.sample
			*ls = LACPDUSample{LACPDUCounters: *pc.LACPDU, SilentSeconds: now.Sub(w.since).Seconds()}
			if w.moved {
				room.age = now.Sub(w.since).Seconds()
				ls.LastRxAgeSeconds = &room.age
			}
			if t.r != nil {
				if age, ok := t.r.LACPDUAge(sl.Name); ok && (ls.LastRxAgeSeconds == nil || age.Seconds() < *ls.LastRxAgeSeconds) {
					room.age = age.Seconds()
					ls.LastRxAgeSeconds = &room.age
					ls.SilentSeconds = room.age
				}
				if pdu := t.r.HeardLACPDU(sl.Name); pdu != nil {
					ls.PartnerView = &pdu.Partner
				}
			}
			sl.LACPDU = ls
		}
	}
	for name, w := range t.lacpRx {
		if w.lastSeen != now {
			delete(t.lacpRx, name)
		}
	}
}
