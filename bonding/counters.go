package bonding

import "time"

// Counter names one interface statistic. The order is the JSON and
// /sys/class/net/<if>/statistics naming, so loops can walk them all.
type Counter uint8

// The interface counters bondtop follows.
const (
	RxBytes Counter = iota
	TxBytes
	RxPackets
	TxPackets
	RxErrors
	TxErrors
	RxDropped
	TxDropped
	RxOverErrors
	RxFifoErrors
	NumCounters
)

var counterNames = [NumCounters]string{
	"rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors",
	"tx_errors", "rx_dropped", "tx_dropped", "rx_over_errors", "rx_fifo_errors",
}

// String is the kernel's name of the counter (a file in statistics/).
func (c Counter) String() string {
	if c < NumCounters {
		return counterNames[c]
	}
	return "unknown"
}

// Counters holds an interface's counters at one instant. A counter the
// source could not read is absent (Has reports false), never zero.
type Counters struct {
	values  [NumCounters]uint64
	present uint16
	// link names the instance of the interface the counters were read
	// from (its ifindex; zero when the source cannot tell). A link
	// deleted and created again under its name counts afresh, and a new
	// bond's counters may even start above the old one's (it folds in
	// what its slaves move from the instant it enslaves them), so
	// counters of two instances are never compared: Follows.
	link uint64
	// age is how long before its source's Read returned the counters
	// were read, for counters read apart from the rest of a reading (an
	// Open vSwitch member's, after the kernel's dump); aged says it was
	// set. Rates run between the times counters were read, and a second
	// source that is slow to answer would otherwise stretch or squeeze
	// one interval for the counters read before it.
	age  time.Duration
	aged bool
}

// SetLink records the instance of the interface the counters were read
// from: its ifindex, or any other number the source keeps for as long as
// the interface exists and never gives another one. Zero means unknown.
func (cs *Counters) SetLink(id uint64) { cs.link = id }

// SetAge records how long before the source's Read returned the
// counters were read, when that differs from the rest of the reading
// (collector.Reading.CountersAge tells the others').
func (cs *Counters) SetAge(d time.Duration) { cs.age, cs.aged = d, true }

// Age returns what SetAge recorded, and whether it was called.
func (cs *Counters) Age() (time.Duration, bool) { return cs.age, cs.aged }

// Follows reports whether cs may be compared with prev, read earlier
// under the same name: both come from the same instance of the
// interface, as far as the sources could tell (an unknown instance
// follows any).
func (cs *Counters) Follows(prev *Counters) bool {
	return cs.link == 0 || prev.link == 0 || cs.link == prev.link
}

// Set records the value of c.
func (cs *Counters) Set(c Counter, v uint64) {
	cs.values[c] = v
	cs.present |= 1 << c
}

// Get returns the value of c and whether the source gave it.
func (cs *Counters) Get(c Counter) (uint64, bool) {
	return cs.values[c], cs.present&(1<<c) != 0
}

// Has reports whether the source gave c.
func (cs *Counters) Has(c Counter) bool { return cs.present&(1<<c) != 0 }

// Empty reports whether no counter was read at all.
func (cs *Counters) Empty() bool { return cs.present == 0 }
