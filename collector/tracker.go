package collector

import (
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// A tracker adds one part of a sample beyond the bonds' own readings:
// the neighbours and the switch's counters, the physical layer, the flow
// meter, the flow table, the host's settings, the configuration in
// force, the findings. Each reads what it tracks at its own pace and
// fills its part of the snapshot being made.
//
// NewSampler lists the trackers the source and the options call for, in
// the order they run (docs/architecture.md, "One tick"); a tracker may
// read what an earlier one added. The order matters twice: the meter is
// read first, so that its interval is the counters' (a socket dump can
// take milliseconds), and its flows are judged last, once the flow table
// says which sockets are this host's own.
type tracker interface {
	track(k *tick)
}

// tick is what one sample's trackers share.
type tick struct {
	now      time.Time
	interval time.Duration
	snap     *model.Snapshot
	// bonds are the source's reading, followed or not.
	bonds []bonding.Bond
	// arrays are where the snapshot's arrays come from (Options.Recycle).
	arrays *lentSnapshot
	// meter is the flow meter's reading of this tick, taken by
	// meterReader and judged by the meterTracker; fresh is false when
	// no read was due (Options.MeterEvery).
	meter meterRead
	fresh bool
}

// buildTrackers lists, in their order, the trackers src and opts call
// for.
func (s *Sampler) buildTrackers(src Source, opts Options) []tracker {
	var out []tracker
	if opts.Neighbors == nil {
		opts.Neighbors, _ = src.(NeighborReader)
	}
	counters, _ := src.(PortCounterReader)
	if opts.Neighbors != nil || counters != nil {
		n := newNeighborTracker(opts.Neighbors, counters)
		n.firmware, _ = src.(FirmwareLLDPReader)
		out = append(out, n)
	}
	if pr, ok := src.(PhysicalReader); ok {
		out = append(out, newPhysTracker(pr))
	}
	if opts.Meter == nil {
		if ms, ok := src.(MeterSource); ok {
			opts.Meter = ms.FlowMeter()
		}
	}
	var meter *meterTracker
	if opts.Meter != nil {
		meter = newMeterTracker(opts.Meter)
		meter.every, meter.kernel = opts.MeterEvery, s.hashKernel
		out = append(out, meterReader{meter})
	}
	if opts.Flows == nil {
		opts.Flows, _ = src.(FlowReader)
	}
	if opts.Flows != nil {
		s.flows = newFlowTracker(opts.Flows, opts.FlowInterval)
		out = append(out, s.flows)
	}
	switch {
	case meter != nil:
		out = append(out, meter)
	case opts.MeterWhy != "":
		out = append(out, noMeter{&model.MeasuredTraffic{Source: model.SourceSockets, Why: opts.MeterWhy}})
	}
	if h, ok := src.(HostReader); ok {
		out = append(out, &hostCache{r: h})
	}
	if c, ok := src.(ConfigReader); ok {
		out = append(out, &configCache{r: c, follows: s.follows})
	}
	if opts.Analyze != nil {
		out = append(out, analyzer(opts.Analyze))
	}
	return out
}

// track runs the trackers over snap.
func (s *Sampler) track(now time.Time, snap *model.Snapshot, bonds []bonding.Bond, arrays *lentSnapshot) {
	// The tick lives in the Sampler, so that handing it to the trackers
	// through their interface costs no allocation.
	s.tick = tick{now: now, interval: s.Interval(), snap: snap, bonds: bonds, arrays: arrays}
	for _, t := range s.trackers {
		t.track(&s.tick)
	}
	s.tick = tick{} // hold on to no snapshot between ticks
}

func (t *neighborTracker) track(k *tick) { t.attach(k.snap, k.interval, k.arrays.sideRooms()) }

func (t *physTracker) track(k *tick) { t.attach(k.now, k.snap) }

func (t *flowTracker) track(k *tick) { t.attach(k.now, k.snap, k.bonds, k.arrays) }

func (c *hostCache) track(k *tick) { k.snap.Host = c.get(k.now) }

// meterReader reads the flow meter at the start of the trackers (see
// tracker); the meterTracker judges what it read once the flow table is
// there.
type meterReader struct{ t *meterTracker }

func (m meterReader) track(k *tick) {
	k.meter, k.fresh = m.t.read(k.now, k.snap, k.bonds, m.t.every, k.interval)
}

// track gives every bond of the snapshot its measured traffic from the
// meter's reading of this tick, or the last one between reads.
func (t *meterTracker) track(k *tick) {
	if !k.fresh {
		t.showLast(k.snap) // between two reads (Options.MeterEvery)
		return
	}
	t.attach(k.now, k.snap, k.bonds, t.kernel(), k.meter)
}

// noMeter says, on every bond, that its traffic comes from the sockets
// and why there is no meter (Options.MeterWhy).
type noMeter struct{ why *model.MeasuredTraffic }

func (n noMeter) track(k *tick) {
	for i := range k.snap.Bonds {
		k.snap.Bonds[i].Measured = n.why
	}
}

// analyzer fills the findings (Options.Analyze), last: it judges
// everything the other trackers added.
type analyzer func(*model.Snapshot)

func (a analyzer) track(k *tick) { a(k.snap) }
