package collector

import (
	"strconv"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// DefaultFlowInterval is how often the Sampler re-reads the sockets: a
// dump of ten thousand sockets costs milliseconds, too much for every
// 100 ms tick, and flows change slowly next to counters.
const DefaultFlowInterval = 3 * time.Second

// flowTracker is the Sampler's side of the flow table: it re-reads the
// sockets every interval, turns byte counts into rates, and predicts each
// bond's flows again when the bond's usable slaves change between reads
// (a slave that loses link moves its flows at once, not at the next dump).
type flowTracker struct {
	reader FlowReader
	every  time.Duration

	readAt   time.Time
	seconds  float64
	kernel   bonding.KernelVersion
	sockets  []model.Socket
	rates    []socketRate
	prev     map[uint64][2]uint64 // socket ID -> tx, rx bytes at readAt
	warnings []string
	lastErr  string

	tables map[string]*model.FlowTable
	keys   map[string]string // bond -> what its prediction depends on
	keyBuf []byte            // scratch of appendPredictionKey
	usable []string          // its scratch for the usable slaves
}

func newFlowTracker(r FlowReader, every time.Duration) *flowTracker {
	if every <= 0 {
		every = DefaultFlowInterval
	}
	return &flowTracker{reader: r, every: every, tables: map[string]*model.FlowTable{}, keys: map[string]string{}}
}

// due reports whether the sockets should be read at now: on the first
// sample, every interval, and once more a second after the first read, so
// rates appear early (bondtop --once samples twice, a second apart).
func (t *flowTracker) due(now time.Time) bool {
	if t.readAt.IsZero() {
		return true
	}
	since := now.Sub(t.readAt)
	return since >= t.every || (t.seconds == 0 && since >= time.Second)
}

// read dumps the sockets and computes their rates since the last dump.
func (t *flowTracker) read(now time.Time) {
	fr, err := t.reader.ReadFlows()
	if err != nil {
		// Keep the old table rather than show none; say so once.
		if msg := "flow table: " + err.Error(); msg != t.lastErr {
			t.lastErr = msg
			t.warnings = []string{msg}
		} else {
			t.warnings = nil
		}
		return
	}
	t.lastErr = ""
	seconds := 0.0
	if !t.readAt.IsZero() {
		seconds = now.Sub(t.readAt).Seconds()
	}
	rates := make([]socketRate, len(fr.Sockets))
	next := make(map[uint64][2]uint64, len(fr.Sockets))
	for i := range fr.Sockets {
		s := &fr.Sockets[i]
		if !s.HaveBytes {
			continue
		}
		next[s.ID] = [2]uint64{s.TxBytes, s.RxBytes}
		if seconds <= 0 {
			continue
		}
		// A socket new since the last dump sent all its bytes within the
		// interval; one whose counts went back is a reused cookie.
		var p [2]uint64
		if old, ok := t.prev[s.ID]; ok {
			if old[0] > s.TxBytes || old[1] > s.RxBytes {
				continue
			}
			p = old
		}
		rates[i] = socketRate{ok: true, tx: float64(s.TxBytes-p[0]) * 8 / seconds, rx: float64(s.RxBytes-p[1]) * 8 / seconds}
	}
	t.readAt, t.seconds, t.kernel = now, seconds, fr.Kernel
	t.sockets, t.rates, t.prev = fr.Sockets, rates, next
	t.warnings = fr.Warnings
	clear(t.keys) // every table is rebuilt from the new dump
}

// attach gives every bond of snap its flow table, reading the sockets when
// due, and fills each slave's Predicted, in the rooms arrays hands out
// (the snapshot's own when it is filled again; sized by its slaves, which
// sampleBonds counted).
func (t *flowTracker) attach(now time.Time, snap *model.Snapshot, bonds []bonding.Bond, arrays *lentSnapshot) {
	if t.due(now) {
		t.read(now)
		snap.Warnings = append(snap.Warnings, t.warnings...)
	}
	if t.readAt.IsZero() {
		return // no dump succeeded yet
	}
	var predicted []model.Predicted // one array for the snapshot's slaves
	var rates []float64
	for i := range snap.Bonds {
		bs := &snap.Bonds[i]
		b := bondNamed(bonds, bs.Name)
		if b == nil {
			continue
		}
		t.keyBuf, t.usable = appendPredictionKey(t.keyBuf[:0], b, t.usable)
		tab := t.tables[b.Name]
		if tab == nil || t.keys[b.Name] != string(t.keyBuf) {
			tab = buildFlowTable(b, t.kernel, t.readAt, t.seconds, t.sockets, t.rates)
			t.tables[b.Name], t.keys[b.Name] = tab, string(t.keyBuf)
		}
		bs.Flows = tab
		for k := range bs.Slaves {
			sf := tab.Slave(bs.Slaves[k].Name)
			if sf == nil {
				continue
			}
			if predicted == nil {
				predicted, rates = arrays.predictions()
			}
			predicted = append(predicted, model.Predicted{Flows: sf.Flows})
			p := &predicted[len(predicted)-1]
			if tab.HaveRates() {
				rates = append(rates, sf.TxBps)
				p.TxBps = &rates[len(rates)-1]
			}
			bs.Slaves[k].Predicted = p
		}
	}
	for name := range t.tables {
		if snap.Bond(name) == nil || bondNamed(bonds, name) == nil {
			delete(t.tables, name)
			delete(t.keys, name)
		}
	}
}

// appendPredictionKey appends to dst what a bond's predictions depend on
// besides the packets: mode, policy, the usable slaves in order, the
// active slave. It is written into a buffer every tick and kept as a
// string only when it changed.
//
// usable is scratch for the usable slaves' names, returned for the next
// call: the key is made on every tick, and allocates nothing.
func appendPredictionKey(dst []byte, b *bonding.Bond, usable []string) ([]byte, []string) {
	if b.Mode != nil {
		dst = append(dst, *b.Mode...)
	}
	dst = append(dst, '|')
	if b.XmitHashPolicy != nil {
		dst = append(dst, *b.XmitHashPolicy...)
	}
	dst = append(dst, '|')
	if b.ActiveSlave != nil {
		dst = append(dst, *b.ActiveSlave...)
	}
	dst = append(dst, '|')
	if b.TLBDynamicLB != nil {
		dst = strconv.AppendInt(dst, int64(*b.TLBDynamicLB), 10)
	}
	usable = bonding.AppendUsable(usable[:0], b, len(b.Slaves), func(i int) *bonding.Slave { return &b.Slaves[i] })
	for _, s := range usable {
		dst = append(append(dst, '|'), s...)
	}
	dst = append(dst, '|')
	return strconv.AppendInt(dst, int64(len(b.Slaves)), 10), usable // a new slave adds a SlaveFlows row
}
