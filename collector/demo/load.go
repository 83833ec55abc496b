package demo

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// Test traffic in the simulation: the dashboard's load panel, under
// --demo, adds streams to a simulated bond for a while. They are hashed
// onto the slaves by the kernel's transmit hash like the demo's own flows,
// share each slave's capacity with them, show in the flow table, and move
// the counters, so the panel's stream rows and the graphs agree.

// LoadSpec describes simulated test streams.
type LoadSpec struct {
	Bond string
	// Dst and DstPort are the peer; UDP picks the protocol.
	Dst     netip.Addr
	DstPort uint16
	UDP     bool
	// SrcPorts has one source port per stream.
	SrcPorts []uint16
	// TxBps and RxBps are each stream's offered rates (this host sending,
	// receiving); a slave carries at most its speed.
	TxBps, RxBps float64
	// Duration in simulated time.
	Duration time.Duration
}

// Load is a running simulated test. Its methods are safe from any
// goroutine.
type Load struct {
	d       *Source
	streams []*demoStream
	done    chan struct{}
	ended   bool
}

// demoStream is one stream's progress, written under Source.mu.
type demoStream struct {
	sent, received float64
	until          time.Duration // simulated time it ends
	stopped        bool
	load           *Load
}

// StreamBytes is one stream's bytes so far.
type StreamBytes struct {
	Sent, Received uint64
}

// LoadFlow is the frame description of a stream from bond to dst, as the
// transmit hash reads it, with SrcPort zero: the demo's addresses and
// MACs, the peer's own MAC on the bond's subnet, else its gateway's.
func (d *Source) LoadFlow(bond string, dst netip.Addr) (bonding.Flow, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.loadFlow(bond, dst)
}

func (d *Source) loadFlow(bond string, dst netip.Addr) (bonding.Flow, error) {
	sb := d.bond(bond)
	if sb == nil {
		return bonding.Flow{}, fmt.Errorf("the demo has no bond %s", bond)
	}
	if len(sb.flows) == 0 || !dst.Is4() {
		return bonding.Flow{}, errors.New("the demo's peers are IPv4 addresses")
	}
	src := sb.flows[0].flow.Src
	f := bonding.Flow{SrcMAC: sb.mac, Src: src, Dst: dst}
	p, _ := src.Prefix(24)
	switch {
	case dst == src:
		return f, fmt.Errorf("%s is this (simulated) host's own address", dst)
	case p.Contains(dst):
		f.DstMAC = mac(0x30, dst.As4()[3])
		for _, sf := range sb.flows {
			if sf.flow.Dst == dst {
				f.DstMAC = sf.flow.DstMAC
			}
		}
	default:
		// The gateway: the MAC the demo's off-subnet flows use.
		for _, sf := range sb.flows {
			if !p.Contains(sf.flow.Dst) {
				f.DstMAC = sf.flow.DstMAC
				break
			}
		}
	}
	return f, nil
}

func (d *Source) bond(name string) *simBond {
	for _, sb := range d.bonds {
		if sb.name == name {
			return sb
		}
	}
	return nil
}

// StartLoad adds spec's streams to the simulation from its next Read on.
func (d *Source) StartLoad(spec LoadSpec) (*Load, error) {
	if len(spec.SrcPorts) == 0 || spec.Duration <= 0 {
		return nil, errors.New("a demo load needs streams and a duration")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	base, err := d.loadFlow(spec.Bond, spec.Dst)
	if err != nil {
		return nil, err
	}
	base.Proto, base.DstPort = bonding.ProtoTCP, spec.DstPort
	if spec.UDP {
		base.Proto = bonding.ProtoUDP
	}
	sb := d.bond(spec.Bond)
	l := &Load{d: d, done: make(chan struct{})}
	for _, sport := range spec.SrcPorts {
		f := base
		f.SrcPort = sport
		st := &demoStream{until: d.elapsed + spec.Duration, load: l}
		l.streams = append(l.streams, st)
		sb.flows = append(sb.flows, simFlow{flow: f, txBps: spec.TxBps, rxBps: spec.RxBps, pktBytes: 1448, stream: st})
	}
	return l, nil
}

// Bytes is each stream's bytes so far, in stream order, and the
// simulated time they were counted at (rates are bytes over simulated
// time: the simulation moves only when the sampler reads it).
func (l *Load) Bytes() ([]StreamBytes, time.Duration) {
	l.d.mu.Lock()
	defer l.d.mu.Unlock()
	out := make([]StreamBytes, len(l.streams))
	for i, st := range l.streams {
		out[i] = StreamBytes{Sent: uint64(st.sent), Received: uint64(st.received)}
	}
	return out, l.d.elapsed
}

// Stop ends the streams at the simulation's next Read.
func (l *Load) Stop() {
	l.d.mu.Lock()
	defer l.d.mu.Unlock()
	for _, st := range l.streams {
		st.stopped = true
	}
}

// Done is closed once the streams have left the simulation.
func (l *Load) Done() <-chan struct{} { return l.done }

// expireLoads takes the test streams whose time is up out of sb, before
// the simulation advances to now; the caller holds d.mu.
func (d *Source) expireLoads(sb *simBond) {
	kept := sb.flows[:0]
	for _, f := range sb.flows {
		if st := f.stream; st != nil && (st.stopped || d.elapsed >= st.until) {
			st.stopped = true
			st.load.maybeEnd()
			continue
		}
		kept = append(kept, f)
	}
	clear(sb.flows[len(kept):])
	sb.flows = kept
}

// recordLoads copies the test streams' bytes out after an advance.
func recordLoads(sb *simBond) {
	for i := range sb.flows {
		if st := sb.flows[i].stream; st != nil {
			st.sent, st.received = sb.flows[i].sent, sb.flows[i].received
		}
	}
}

func (l *Load) maybeEnd() {
	if l.ended {
		return
	}
	for _, st := range l.streams {
		if !st.stopped {
			return
		}
	}
	l.ended = true
	close(l.done)
}
