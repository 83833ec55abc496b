package demo

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/flowmeter"
)

// The demo's flow meter: what an in-kernel meter on the simulated slaves
// would count. Every frame the simulation places on a slave (by the
// kernel's transmit hash on tx, by the switch's hash on rx) adds to that
// flow's counters on that slave, so the flows view, the hash check and
// the receive-side findings can be seen without root or a bond.

var _ collector.MeterSource = (*Source)(nil)

// meterSlot is a flow's place on one slave in one direction.
type meterSlot struct {
	slave int
	rx    bool
}

type meterCount struct {
	bytes, packets float64
	first, last    time.Time
}

// demoMeterIdle deletes entries unseen for this long, as the real meter
// deletes idle flows (flowmeter.DefaultIdleTimeout).
const demoMeterIdle = flowmeter.DefaultIdleTimeout

// meter counts bytes of f on slave (index into sb.slaves).
func (sb *simBond) meter(f *simFlow, slave int, rx bool, bytes float64) {
	if f.metered == nil {
		f.metered = map[meterSlot]*meterCount{}
	}
	slot := meterSlot{slave, rx}
	c := f.metered[slot]
	if c == nil {
		c = &meterCount{first: sb.now}
		f.metered[slot] = c
	}
	c.bytes += bytes
	c.packets += bytes / f.pktBytes
	if bytes > 0 {
		c.last = sb.now
	}
}

// FlowMeter returns the simulated meter of the demo host.
func (d *Source) FlowMeter() flowmeter.Meter { return &demoMeter{d: d} }

// demoMeter implements flowmeter.Meter over the simulation.
type demoMeter struct {
	d        *Source
	mu       sync.Mutex
	attached map[int]string
}

var (
	_ flowmeter.Meter           = (*demoMeter)(nil)
	_ collector.IfindexResolver = (*demoMeter)(nil)
)

// Ifindex numbers the simulated slaves: 2, 3, ... in bond and enslave
// order (1 is lo).
func (m *demoMeter) Ifindex(name string) (int, error) {
	n := 2
	for _, sb := range m.d.bonds {
		for _, s := range sb.slaves {
			if s == name {
				return n, nil
			}
			n++
		}
	}
	return 0, fmt.Errorf("the demo has no interface %s", name)
}

func (m *demoMeter) Sync(slaves map[int]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attached = make(map[int]string, len(slaves))
	for k, v := range slaves {
		m.attached[k] = v
	}
	return nil
}

func (m *demoMeter) Close() error { return nil }

// Read reports the counters as of the simulation's last step.
func (m *demoMeter) Read() (flowmeter.Reading, error) {
	m.mu.Lock()
	attached := m.attached
	m.mu.Unlock()
	d := m.d
	d.mu.Lock()
	defer d.mu.Unlock()
	r := flowmeter.Reading{Time: d.last, Source: flowmeter.SourceEBPF, SampleRate: 1, MapSize: flowmeter.DefaultMaxFlows}
	for _, sb := range d.bonds {
		idx := make([]int, len(sb.slaves))
		for i, s := range sb.slaves {
			idx[i], _ = m.Ifindex(s)
		}
		for i := range sb.flows {
			f := &sb.flows[i]
			for slot, c := range f.metered {
				if d.last.Sub(c.last) > demoMeterIdle {
					delete(f.metered, slot) // idle: the meter forgets it
					continue
				}
				ifindex := idx[slot.slave]
				if attached[ifindex] == "" {
					continue
				}
				r.Flows = append(r.Flows, demoMeterFlow(sb, f, slot, ifindex, c))
			}
		}
	}
	r.MapEntries = len(r.Flows)
	return r, nil
}

// demoMeterFlow is f's entry on one slave as the meter keys it: the
// frame's headers as they cross the slave (reversed on rx).
func demoMeterFlow(sb *simBond, f *simFlow, slot meterSlot, ifindex int, c *meterCount) flowmeter.Flow {
	p := f.flow
	out := flowmeter.Flow{Slave: sb.slaves[slot.slave]}
	out.Ifindex = ifindex
	out.EtherType = 0x0800
	if p.Src.Is6() {
		out.EtherType = 0x86DD
	}
	out.Proto, out.VLAN = p.Proto, p.VLAN
	out.Src, out.Dst, out.SrcPort, out.DstPort = p.Src, p.Dst, p.SrcPort, p.DstPort
	out.SrcMAC, out.DstMAC = p.SrcMAC, p.DstMAC
	if slot.rx {
		out.Direction = flowmeter.Rx
		out.Src, out.Dst, out.SrcPort, out.DstPort = p.Dst, p.Src, p.DstPort, p.SrcPort
		out.SrcMAC, out.DstMAC = p.DstMAC, p.SrcMAC
	} else {
		// Local sockets hash their packets; forwarded frames arrive from
		// a VM's tap.
		out.L4Hash = !f.forwarded
		out.IngressIfindex = f.ingress
	}
	out.Bytes, out.Packets = uint64(math.Floor(c.bytes)), uint64(math.Floor(c.packets))
	out.FirstSeen, out.LastSeen = c.first, c.last
	return out
}
