package collector

import (
	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// maxPlausibleBps bounds a rate before it is believed: 1.6 Tbit/s is above
// any single bond today, so anything larger is a counter glitch that slipped
// past the went-back check (a reset followed by fast regrowth).
const maxPlausibleBps = 1.6e12

// numbers hands out the pointers a snapshot's traffic is made of (every
// counter, rate and share is a *uint64 or *float64, nil when unknown)
// from one array of room per interface, allocated once per snapshot: one
// allocation per value would be some hundred per tick, for values that
// live exactly as long as the snapshot. Each interface takes its values
// from a room of its own (next moves on to the next room), and a bond's
// slaves' shares from the rooms after theirs; a snapshot that needs more
// rooms than it made gets a new array, never a grown one: growing would
// copy the values away from their pointers.
type numbers struct {
	rooms []numberRoom
	cur   *numberRoom
}

// numberRoom holds one interface's values: ten totals and six interval
// counts; four rates and two shares; its interval's ErrorCounts.
type numberRoom struct {
	u      [bonding.NumCounters + 6]uint64
	f      [6]float64
	errs   model.ErrorCounts
	nu, nf int
}

// roomsFor is how many rooms a bond with slaves slaves needs: one per
// interface, and the slaves' shares (two each) after them, the first two
// in the last slave's room.
func roomsFor(slaves int) int {
	return 1 + slaves + (max(2*slaves-2, 0)+len(numberRoom{}.f)-1)/len(numberRoom{}.f)
}

// next starts the room of the next interface.
func (n *numbers) next() {
	if len(n.rooms) == cap(n.rooms) {
		n.rooms = make([]numberRoom, 0, 1)
	}
	n.rooms = n.rooms[:len(n.rooms)+1]
	n.cur = &n.rooms[len(n.rooms)-1]
	*n.cur = numberRoom{} // a room handed back holds a past tick's values
}

func (n *numbers) uint(v uint64) *uint64 {
	if n.cur == nil || n.cur.nu == len(n.cur.u) {
		n.next()
	}
	r := n.cur
	r.u[r.nu] = v
	r.nu++
	return &r.u[r.nu-1]
}

func (n *numbers) float(v float64) *float64 {
	if n.cur == nil || n.cur.nf == len(n.cur.f) {
		n.next()
	}
	r := n.cur
	r.f[r.nf] = v
	r.nf++
	return &r.f[r.nf-1]
}

func (n *numbers) errorCounts() *model.ErrorCounts { return &n.cur.errs }

// totals copies the counters the source could read.
func totals(nums *numbers, cs *bonding.Counters) model.Totals {
	var t model.Totals
	for c, at := range totalsFields(&t) {
		if v, ok := cs.Get(bonding.Counter(c)); ok {
			*at = nums.uint(v)
		}
	}
	return t
}

// totalsFields are t's fields, in the order of the bonding.Counter each
// holds.
func totalsFields(t *model.Totals) [bonding.NumCounters]**uint64 {
	return [...]**uint64{&t.RxBytes, &t.TxBytes, &t.RxPackets, &t.TxPackets, &t.RxErrors,
		&t.TxErrors, &t.RxDropped, &t.TxDropped, &t.RxOverErrors, &t.RxFifoErrors}
}

// wentBack reports whether any counter present in both readings decreased:
// the interface was reset, re-enslaved or wrapped at 32 bits, so the whole
// interval is a gap for it.
func wentBack(prev, cur *bonding.Counters) bool {
	for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
		p, okp := prev.Get(c)
		v, okc := cur.Get(c)
		if okp && okc && v < p {
			return true
		}
	}
	return false
}

// traffic computes an interface's Traffic from two readings seconds apart.
// hasPrev is false for the first reading of an interface; a reading of
// another instance of it (deleted and created again between the two)
// counts as a first one.
//
// It takes its values from the next room of nums, which fillShares may
// add to later. The counters are passed by pointer and read in place:
// the Sampler calls this for every interface on every tick.
func traffic(nums *numbers, prev *bonding.Counters, hasPrev bool, cur *bonding.Counters, seconds float64) model.Traffic {
	nums.next()
	t := model.Traffic{Totals: totals(nums, cur)}
	if !hasPrev || seconds <= 0 || !cur.Follows(prev) || wentBack(prev, cur) {
		return t
	}
	// Each counter's growth over the interval, where both readings have it.
	var delta [bonding.NumCounters]uint64
	var both [bonding.NumCounters]bool
	for c := range bonding.NumCounters {
		p, okp := prev.Get(c)
		v, okc := cur.Get(c)
		delta[c], both[c] = v-p, okp && okc
	}
	rate := func(c bonding.Counter, scale float64) *float64 {
		if !both[c] {
			return nil
		}
		r := float64(delta[c]) * scale / seconds
		if r > maxPlausibleBps {
			return nil
		}
		return nums.float(r)
	}
	t.RxBps = rate(bonding.RxBytes, 8)
	t.TxBps = rate(bonding.TxBytes, 8)
	t.RxPps = rate(bonding.RxPackets, 1)
	t.TxPps = rate(bonding.TxPackets, 1)
	// The error counters, from RxErrors on (the order of Totals and
	// ErrorCounts): an interval count for each one both readings have,
	// none at all when they have none.
	iv := nums.errorCounts()
	*iv = model.ErrorCounts{}
	fields := [...]**uint64{&iv.RxErrors, &iv.TxErrors, &iv.RxDropped, &iv.TxDropped, &iv.RxOverErrors, &iv.RxFifoErrors}
	known := false
	for i, at := range fields {
		if c := bonding.RxErrors + bonding.Counter(i); both[c] {
			*at = nums.uint(delta[c])
			known = true
		}
	}
	if known {
		t.Interval = iv
	}
	return t
}

// fillShares sets each slave's share of the bytes all slaves moved. Shares
// need every slave's rate: with one missing the split is unknown.
func fillShares(nums *numbers, slaves []model.SlaveSample) {
	var sumRx, sumTx float64
	rxKnown, txKnown := true, true
	for i := range slaves {
		if r := slaves[i].RxBps; r != nil {
			sumRx += *r
		} else {
			rxKnown = false
		}
		if r := slaves[i].TxBps; r != nil {
			sumTx += *r
		} else {
			txKnown = false
		}
	}
	for i := range slaves {
		if rxKnown && sumRx > 0 {
			slaves[i].ShareRx = nums.float(*slaves[i].RxBps / sumRx)
		}
		if txKnown && sumTx > 0 {
			slaves[i].ShareTx = nums.float(*slaves[i].TxBps / sumTx)
		}
	}
}
