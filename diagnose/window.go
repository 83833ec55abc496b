package diagnose

import (
	"math"
	"slices"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/intent"
	"github.com/bondtop/bondtop/model"
)

// DefaultWindow is the span trends and shares are judged over.
const DefaultWindow = 30 * time.Second

// Window keeps, per bond, the samples of the last span and running sums
// of each slave's bytes over them, and fills each new snapshot's
// findings. Its cost per tick grows with the slaves, not with the
// window's length: the shares add the new sample and subtract the one
// leaving instead of summing the window again. It is what the Sampler's
// Options.Analyze runs; not safe for concurrent use (the Sampler calls it
// from its goroutine).
type Window struct {
	span  time.Duration
	bonds map[string]*bondWindow
	// whatIf caches the what-if table per flow table: ten thousand flows
	// under every policy cost milliseconds, and a table lives for several
	// ticks.
	whatIf map[string]whatIfEntry
	// changes keeps, per bond, the last change of its MAC and of its
	// LACP system MAC seen in the run: their findings outlive the window.
	changes map[string][]model.Event
	// analyzed is, per bond, its last analysis: what Fill carries into
	// the snapshots between two analyses (see reanalyzeEvery).
	analyzed map[string]analysis
	// view is the view every analysis fills again: one allocation for
	// the Window's life rather than one per analysis.
	view view
}

// reanalyzeEvery is how often Fill judges a bond's window again when
// nothing happened to the bond: below a second, a snapshot between two
// analyses carries the findings of the last one. A snapshot with an event
// of the bond (a link, a state, a slave, a partner that changed) is
// judged at once, so a change shows in the findings of the snapshot that
// shows the change; what builds up over the window (shares, error rates)
// shows at most this late. At a pace of a second or slower every snapshot
// is judged. The checks read sums over the 30 s window, which a tenth of
// a second moves little, and were most of the cost of a snapshot's
// diagnosis.
const reanalyzeEvery = time.Second

// analysis is a bond's last findings and when they were made.
type analysis struct {
	at       time.Time
	findings []Finding
	intended *intent.Bond
	drift    []intent.Drift
}

type whatIfEntry struct {
	table    *model.FlowTable
	measured *model.MeasuredTraffic
	w        *WhatIfTable
}

// NewWindow keeps span of history (DefaultWindow when zero).
func NewWindow(span time.Duration) *Window {
	if span <= 0 {
		span = DefaultWindow
	}
	return &Window{span: span, bonds: map[string]*bondWindow{}, whatIf: map[string]whatIfEntry{},
		changes: map[string][]model.Event{}, analyzed: map[string]analysis{}}
}

// Fill adds s to the window and sets the findings of each of its bonds
// (never nil: an empty list says "analyzed, nothing found"). Call it
// before s is handed to anyone else: it writes into s.
func (w *Window) Fill(s *model.Snapshot) {
	w.push(s)
	for i := range s.Bonds {
		b := &s.Bonds[i]
		if last, ok := w.analyzed[b.Name]; ok && !w.due(s, b.Name, last.at) {
			// Clipped: a consumer appending to one snapshot's findings
			// must not write into the next one's.
			b.Findings, b.Intended, b.Drift = slices.Clip(last.findings), last.intended, slices.Clip(last.drift)
			continue
		}
		v := &w.view
		v.reset(w.bonds[b.Name], s, b)
		v.whatIf = w.cachedWhatIf(b, v.mix)
		v.changes = w.changes[b.Name]
		b.Findings = v.analyze()
		b.Intended, b.Drift = v.drift()
		*v = view{} // holds nothing of s past Fill
		w.analyzed[b.Name] = analysis{at: s.Time, findings: b.Findings, intended: b.Intended, drift: b.Drift}
	}
	if len(w.analyzed) > len(s.Bonds) {
		for name := range w.analyzed {
			if !slices.ContainsFunc(s.Bonds, func(b model.BondSample) bool { return b.Name == name }) {
				delete(w.analyzed, name)
			}
		}
	}
}

// due says whether bond's findings, last made at, must be made again for
// s: reanalyzeEvery has passed, give or take half an interval (a ticker's
// second comes a little early as often as late: at 1 s every snapshot is
// judged), or the clock went back, or s has an event of the bond.
func (w *Window) due(s *model.Snapshot, bond string, at time.Time) bool {
	halfInterval := time.Duration(s.IntervalSeconds * float64(time.Second) / 2)
	if d := s.Time.Sub(at); d+halfInterval >= reanalyzeEvery || d < 0 {
		return true
	}
	for i := range s.Events {
		if s.Events[i].Bond == bond {
			return true
		}
	}
	return false
}

// push adds s to every bond's window and drops what left the span,
// bonds gone for longer than the span included.
func (w *Window) push(s *model.Snapshot) {
	for _, e := range s.Events {
		w.changes[e.Bond] = keepChange(w.changes[e.Bond], e)
	}
	for i := range s.Bonds {
		b := &s.Bonds[i]
		bw := w.bonds[b.Name]
		if bw == nil {
			bw = newBondWindow()
			w.bonds[b.Name] = bw
		}
		bw.add(b, s.IntervalSeconds, s.Time)
	}
	for name, bw := range w.bonds {
		bw.trim(s.Time, w.span)
		if len(bw.samples) == 0 {
			delete(w.bonds, name)
		}
	}
}

// Analyze returns the findings of every bond of the last snapshot of
// history (oldest first), judging trends and shares over all of them.
func Analyze(history []*model.Snapshot) map[string][]Finding {
	out := map[string][]Finding{}
	if len(history) == 0 {
		return out
	}
	w := NewWindow(math.MaxInt64)
	for _, s := range history {
		w.push(s)
	}
	last := history[len(history)-1]
	for i := range last.Bonds {
		b := &last.Bonds[i]
		v := newView(w.bonds[b.Name], last, b)
		v.whatIf = whatIfOf(b, v.mix)
		v.changes = w.changes[b.Name]
		out[b.Name] = v.analyze()
	}
	return out
}

// cachedWhatIf is the what-if of b's mix: recomputed when the flow
// table or the measured traffic changed (every sample with a meter; the
// measured mix is bounded by maxMixFlows).
func (w *Window) cachedWhatIf(b *model.BondSample, mix *txMix) *WhatIfTable {
	if mix == nil {
		delete(w.whatIf, b.Name)
		return nil
	}
	if e, ok := w.whatIf[b.Name]; ok && e.table == b.Flows && e.measured == b.Measured {
		return e.w
	}
	t := whatIfOf(b, mix)
	w.whatIf[b.Name] = whatIfEntry{b.Flows, b.Measured, t}
	return t
}

// sample is one bond in one snapshot of the window: what the checks
// read of it later, not the sample itself (30 s of snapshots of dozens of
// bonds would hold hundreds of megabytes).
type sample struct {
	seconds float64
	at      time.Time
	// bytes is what each slave moved in the sample's interval (from its
	// rates), the part it adds to the running sums; txCounted and
	// rxCounted say whether any slave had a rate in that direction.
	bytes                []slaveDelta
	txCounted, rxCounted bool
	// marks are the slaves' cumulative counts, shared with the samples
	// before while they stay the same (never written once stored).
	marks []slaveMark
	// changed marks the sample where the usable slaves became what they
	// were next: its interval lies before the change, so it adds nothing.
	changed bool
}

// slaveDelta is what one slave adds to the window's sums in a sample:
// bytes from its rates, and the errors, overruns, drops and packets its
// counters rose by in the interval.
type slaveDelta struct {
	name   string
	tx, rx float64
	counts counterSums
}

// slaveMark is a slave's cumulative counts at a sample, for what rose
// during the window (the first sample's against now). They change
// rarely, so a sample whose marks are all those of the sample before
// shares that sample's slice: the window holds one copy per change, not
// one per sample (see docs/performance.md).
type slaveMark struct {
	name                                       string
	linkFailures, actorChurned, partnerChurned optInt
	// What the switch side knew at the sample (known only with a
	// neighbour tracker): the LACPDUs the bond could not use, and the
	// carrier's down count.
	badLACPDUs, carrierDowns optUint
	fec                      fecMark // physical.go
}

// optUint is a uint64 that may be unknown.
type optUint struct {
	v  uint64
	ok bool
}

// optInt is an int that may be unknown.
type optInt struct {
	v  int
	ok bool
}

func optOf(p *int) optInt {
	if p == nil {
		return optInt{}
	}
	return optInt{*p, true}
}

// rose reports whether a count known then and now grew.
func (o optInt) rose(now *int) bool { return o.ok && now != nil && *now > o.v }

// counterSums are a slave's error counts over the window.
// (rxDrops, part of drops, are the received frames dropped.)
type counterSums struct{ errs, over, drops, rxDrops, packets uint64 }

func (c *counterSums) add(d counterSums, sign int) {
	if sign > 0 {
		c.errs, c.over, c.drops, c.rxDrops, c.packets = c.errs+d.errs, c.over+d.over, c.drops+d.drops, c.rxDrops+d.rxDrops, c.packets+d.packets
		return
	}
	c.errs, c.over, c.drops, c.rxDrops, c.packets = c.errs-d.errs, c.over-d.over, c.drops-d.drops, c.rxDrops-d.rxDrops, c.packets-d.packets
}

type slaveSums struct{ tx, rx float64 }

// bondWindow is one bond over the window: its samples (oldest first) and
// the running sums of the shares over samples[shareFrom:], the samples
// since the usable slaves became what they are now: before a failover or
// a slave leaving the aggregator the flows hashed elsewhere, and mixing
// the two would show neither.
type bondWindow struct {
	samples   []sample
	shareFrom int
	usable    []string
	sums      map[string]*slaveSums
	txSeconds float64
	rxSeconds float64
	// sinceResum counts samples since the sums were last summed afresh:
	// adding and subtracting floats drifts, so once per window length the
	// sums are rebuilt from the samples (O(slaves) a tick, amortized).
	sinceResum int
	spare      [][]slaveDelta // bytes slices of samples that left, reused
	markBuf    []slaveMark    // the marks being made, compared with the last stored
	prevUsable []string
	// counts are every slave's error counts over all the samples (a
	// slave without interval counts in any sample has none).
	counts map[string]*counterSums
	// shareSlaves and shareBytes hold what shares returns, reused from
	// one analysis to the next.
	shareSlaves []string
	shareBytes  []float64
}

func newBondWindow() *bondWindow {
	return &bondWindow{sums: map[string]*slaveSums{}, counts: map[string]*counterSums{}}
}

func (bw *bondWindow) add(b *model.BondSample, seconds float64, at time.Time) {
	bw.prevUsable, bw.usable = bw.usable, usableOf(b, bw.prevUsable[:0])
	smp := sample{seconds: seconds, at: at}
	if len(bw.samples) > 0 && !slices.Equal(bw.prevUsable, bw.usable) {
		smp.changed = true
	}
	var bytes []slaveDelta
	if n := len(bw.spare); n > 0 {
		bytes, bw.spare = bw.spare[n-1][:0], bw.spare[:n-1]
	} else {
		bytes = make([]slaveDelta, 0, len(b.Slaves)) // one allocation while the window fills
	}
	marks := bw.markBuf[:0]
	for i := range b.Slaves {
		sl := &b.Slaves[i]
		d := slaveDelta{name: sl.Name}
		m := slaveMark{name: sl.Name, linkFailures: optOf(sl.LinkFailureCount),
			actorChurned: optOf(sl.ActorChurnedCount), partnerChurned: optOf(sl.PartnerChurnedCount)}
		m.fec = fecMarkOf(sl)
		if sl.SwitchSide != nil {
			if sl.LACPDU != nil {
				m.badLACPDUs = optUint{sl.LACPDU.IllegalRx + sl.LACPDU.UnknownRx, true}
			}
			if sl.Carrier != nil {
				m.carrierDowns = optUint{sl.Carrier.Down, true}
			}
		}
		marks = append(marks, m)
		if seconds > 0 {
			if sl.TxBps != nil {
				d.tx = *sl.TxBps * seconds / 8
				smp.txCounted = true
			}
			if sl.RxBps != nil {
				d.rx = *sl.RxBps * seconds / 8
				smp.rxCounted = true
			}
		}
		if iv := sl.Interval; iv != nil {
			d.counts = counterSums{
				errs:    val(iv.RxErrors) + val(iv.TxErrors),
				over:    val(iv.RxOverErrors) + val(iv.RxFifoErrors),
				drops:   val(iv.RxDropped) + val(iv.TxDropped),
				rxDrops: val(iv.RxDropped),
			}
			if sl.RxPps != nil && sl.TxPps != nil {
				d.counts.packets = uint64((*sl.RxPps + *sl.TxPps) * seconds)
			}
			c := bw.counts[sl.Name]
			if c == nil {
				c = &counterSums{}
				bw.counts[sl.Name] = c
			}
			c.add(d.counts, 1)
		}
		bytes = append(bytes, d)
	}
	smp.bytes = bytes
	bw.markBuf = marks
	if n := len(bw.samples); n > 0 && slices.Equal(bw.samples[n-1].marks, marks) {
		smp.marks = bw.samples[n-1].marks
	} else {
		smp.marks = slices.Clone(marks)
	}
	bw.samples = append(bw.samples, smp)
	if smp.changed {
		bw.shareFrom = len(bw.samples) - 1
		clear(bw.sums) // forget slaves that left
		bw.resum()
		return
	}
	bw.apply(&bw.samples[len(bw.samples)-1], 1)
	if bw.sinceResum++; bw.sinceResum >= max(len(bw.samples), 64) {
		bw.resum()
	}
}

// trim drops the samples older than span before now, keeping the newest.
func (bw *bondWindow) trim(now time.Time, span time.Duration) {
	cut := 0
	for cut < len(bw.samples) && now.Sub(bw.samples[cut].at) > span {
		if cut >= bw.shareFrom {
			bw.apply(&bw.samples[cut], -1)
		}
		for _, d := range bw.samples[cut].bytes {
			if c := bw.counts[d.name]; c != nil {
				c.add(d.counts, -1)
			}
		}
		if bw.samples[cut].bytes != nil {
			bw.spare = append(bw.spare, bw.samples[cut].bytes)
		}
		cut++
	}
	if cut == 0 {
		return
	}
	bw.samples = slices.Delete(bw.samples, 0, cut)
	bw.shareFrom = max(0, bw.shareFrom-cut)
}

// apply adds (sign 1) or subtracts (-1) a sample's bytes.
func (bw *bondWindow) apply(smp *sample, sign float64) {
	if smp.changed {
		return
	}
	for _, sb := range smp.bytes {
		s := bw.sums[sb.name]
		if s == nil {
			s = &slaveSums{}
			bw.sums[sb.name] = s
		}
		s.tx += sign * sb.tx
		s.rx += sign * sb.rx
	}
	if smp.txCounted {
		bw.txSeconds += sign * smp.seconds
	}
	if smp.rxCounted {
		bw.rxSeconds += sign * smp.seconds
	}
}

// resum rebuilds the sums from samples[shareFrom:].
func (bw *bondWindow) resum() {
	for _, s := range bw.sums {
		*s = slaveSums{}
	}
	bw.txSeconds, bw.rxSeconds = 0, 0
	for i := bw.shareFrom; i < len(bw.samples); i++ {
		bw.apply(&bw.samples[i], 1)
	}
	bw.sinceResum = 0
}

// firstSlave is what the window's oldest sample knew of a slave, nil
// when it had no such slave.
func (bw *bondWindow) firstSlave(name string) *slaveMark {
	if len(bw.samples) == 0 {
		return nil
	}
	for i, m := range bw.samples[0].marks {
		if m.name == name {
			return &bw.samples[0].marks[i]
		}
	}
	return nil
}

// seconds is the time the window's samples cover (the first one's
// interval lies before the window).
func (bw *bondWindow) seconds() float64 {
	s := 0.0
	for i := 1; i < len(bw.samples); i++ {
		s += bw.samples[i].seconds
	}
	return s
}

// shares are one direction's shares over the bond's window, the slaves of
// now naming the rows. Their slices are the window's, reused: valid until
// the next call (the imbalance check reads them and lets go).
func (bw *bondWindow) shares(now *model.BondSample, tx bool) Shares {
	n := len(now.Slaves)
	bw.shareSlaves = slices.Grow(bw.shareSlaves[:0], n)[:n]
	bw.shareBytes = slices.Grow(bw.shareBytes[:0], n)[:n]
	clear(bw.shareBytes)
	s := Shares{Largest: -1, Slaves: bw.shareSlaves, Bytes: bw.shareBytes}
	s.Seconds = bw.rxSeconds
	if tx {
		s.Seconds = bw.txSeconds
	}
	total := 0.0
	for i := range now.Slaves {
		s.Slaves[i] = now.Slaves[i].Name
		if sum := bw.sums[now.Slaves[i].Name]; sum != nil {
			s.Bytes[i] = max(0, sum.rx)
			if tx {
				s.Bytes[i] = max(0, sum.tx)
			}
		}
		total += s.Bytes[i]
	}
	s.score(total, len(bw.usable))
	return s
}

// usableOf appends a sample's usable slaves to dst (the sample keeps its
// slaves in BondSample.Slaves, so the bond is read where it lies).
func usableOf(b *model.BondSample, dst []string) []string {
	return bonding.AppendUsable(dst, &b.Bond, len(b.Slaves), func(i int) *bonding.Slave { return &b.Slaves[i].Slave })
}
