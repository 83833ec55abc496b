package neighbors

import (
	"sync"
	"time"
)

// slaveState is what a listener knows about one slave.
type slaveState struct {
	// byProto holds the latest frame of each protocol: it keeps an LLDP and a CDP neighbour apart: a switch that
	// speaks both sends both, and LLDP wins when both are alive.
	byProto  map[string]*Neighbor
	lastSlow time.Time // the latest LACPDU or marker received
	lacpdu   *LACPDU   // the latest LACPDU decoded
	bad      int       // frames that failed to decode
	lastErr  error
}

// table holds each slave's neighbours; the platform listener feeds it.
type table struct {
	mu     sync.Mutex
	clock  func() time.Time
	slaves map[string]*slaveState
}

func newTable(clock func() time.Time) *table {
	if clock == nil {
		clock = time.Now
	}
	return &table{clock: clock, slaves: make(map[string]*slaveState)}
}

func (t *table) state(slave string) *slaveState {
	s := t.slaves[slave]
	if s == nil {
		s = &slaveState{byProto: make(map[string]*Neighbor)}
		t.slaves[slave] = s
	}
	return s
}

// frame records one received frame on slave.
func (t *table) frame(slave string, b []byte) {
	now := t.clock()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.state(slave)
	if len(b) >= 14 && b[12] == EtherTypeSlow>>8 && b[13] == EtherTypeSlow&0xff {
		s.lastSlow = now
		if pdu, err := DecodeLACPDU(b); err == nil {
			s.lacpdu = pdu
		}
		return
	}
	n, err := Decode(b)
	if err != nil {
		s.bad++
		s.lastErr = err
		return
	}
	n.Received = now
	if n.TTLSeconds == 0 { // a shutdown frame: forget this sender now
		delete(s.byProto, n.Protocol)
		return
	}
	s.byProto[n.Protocol] = n
}

// forget drops a slave no longer listened on.
func (t *table) forget(slave string) {
	t.mu.Lock()
	delete(t.slaves, slave)
	t.mu.Unlock()
}

// CopyNeighbor copies the slave's live neighbour (LLDP before CDP), its
// age at now (a time of the listener's clock, read once by the caller
// for all its slaves) filled in, into a value of the caller's (a room it fills again
// every tick): false, and into untouched, when none was heard or its TTL
// ran out. The copy shares the decoded frame's slices, which are never
// written.
func (t *table) CopyNeighbor(slave string, now time.Time, into *Neighbor) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.slaves[slave]
	if s == nil {
		return false
	}
	for _, p := range [...]string{ProtoLLDP, ProtoCDP} {
		n := s.byProto[p]
		if n == nil {
			continue
		}
		age := now.Sub(n.Received)
		if age > time.Duration(n.TTLSeconds)*time.Second {
			delete(s.byProto, p)
			continue
		}
		*into = *n
		into.AgeSeconds = age.Seconds()
		return true
	}
	return false
}

// LACPDUAge returns the time from the last slow-protocol frame (LACPDU
// or marker) that arrived on slave to now (a time of the listener's
// clock); ok is false when none did since listening began. The caller
// reads the clock once for all its slaves.
func (t *table) LACPDUAge(slave string, now time.Time) (age time.Duration, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.slaves[slave]; s != nil && !s.lastSlow.IsZero() {
		return now.Sub(s.lastSlow), true
	}
	return 0, false
}

// CopyLACPDU copies the last LACPDU received on slave into a value of the
// caller's: false, and into untouched, when none was heard.
func (t *table) CopyLACPDU(slave string, into *LACPDU) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.slaves[slave]; s != nil && s.lacpdu != nil {
		*into = *s.lacpdu
		return true
	}
	return false
}
