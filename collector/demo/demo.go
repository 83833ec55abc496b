// Package demo is the --demo source: a simulated host with bonds that
// misbehave on a script, so bondtop can be tried anywhere without root or
// a bond. It owns the simulation (the bonds, their flows placed by the
// kernel's own transmit hash, counters that follow the wall clock), and
// answers nearly every capability of the Source contract from it:
// FlowReader, MeterSource, NeighborReader, PortCounterReader,
// PhysicalReader, HostReader (see collector/source.go), besides the load
// panel's simulated test streams (Load).
package demo

import (
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
)

// Source simulates a host with two bonds, so bondtop can be tried
// anywhere, without root or a bond:
//
//   - bond0: 802.3ad over four 10G slaves with the layer2 policy. Most of the
//     traffic goes to one gateway, so one slave carries nearly all of it —
//     the classic "4 x 10G moves 10G". Six VMs behind a bridge on the bond
//     send and fetch through it too (forwarded traffic no socket of the
//     host shows), and the switch hashes by source MAC, so everything the
//     gateway sends arrives on one slave.
//   - bond1: active-backup over two 1G slaves with a primary.
//
// Flows are placed on slaves by the kernel's own transmit hash
// (bonding.Predictor), capped at the slave's speed, and counted per slave
// by a simulated flow meter (meter.go). In the first two minutes of
// the script about every 15 s something happens (a slave loses link, a
// failover, the LACP partner flaps), so every panel has something to
// show; the three minutes after hold incidents as long as alert rules
// wait (clock.go). The script runs on the wall clock, and so do the
// counters: a restarted demo continues where the last one would be.
type Source struct {
	// mu guards the simulation: the sampler reads it while the load
	// panel adds test streams (load.go).
	mu      sync.Mutex
	clock   func() time.Time
	start   time.Time
	last    time.Time
	kernel  bonding.KernelVersion
	bonds   []*simBond
	ovs     *demoOVS      // the Open vSwitch bond beside the kernel's (ovs.go)
	elapsed time.Duration // simulated time since start, as of the last Read
	week    int64         // the week of Unix time the counters count from
}

// simBond is one simulated bond: its configuration, the state the script
// sets, the flows it sends and the counters they add up to.
type simBond struct {
	name     string
	mode     string
	policy   string
	mac      [6]byte
	speeds   []int // Mbit/s per slave
	slaves   []string
	primary  string
	flows    []simFlow
	counters map[string]*[bonding.NumCounters]float64
	// loadCounters hold what the load panel's test streams added: the
	// rest of the counters is a function of the wall clock (clock.go).
	loadCounters map[string]*[bonding.NumCounters]float64
	// published are the counters the last Read reported.
	published map[string]*[bonding.NumCounters]uint64
	// script state
	linkDown    map[string]bool
	failures    map[string]int
	active      string
	partnerLost map[string]bool // LACP partner defaulted on that slave
	churned     map[string]int
	partnerMAC  [6]byte
	// switchHash places the frames the switch sends to the bond on a
	// slave (index into usable); nil: the bond's own hash over the
	// reversed frame stands in.
	switchHash func(f *bonding.Flow, usable int) int
	// now is the simulated time of the current advance.
	now time.Time
}

// simFlow is a stream of packets in both directions.
type simFlow struct {
	flow         bonding.Flow
	txBps, rxBps float64
	pktBytes     float64
	// sent and received count the bytes so far, for the flow table.
	sent, received float64
	// stream is set for a test stream of the load panel (load.go).
	stream *demoStream
	// forwarded marks traffic of a VM behind the bond's bridge: no socket
	// of this host, seen only by the flow meter. ingress is its tap.
	forwarded bool
	ingress   int
	// metered counts the flow's frames per slave and direction for the
	// simulated flow meter (meter.go).
	metered map[meterSlot]*meterCount
}

// New starts the simulation at clock's now. Pass time.Now for a
// live demo, a fake clock in tests to fast-forward.
func New(clock func() time.Time) *Source {
	if clock == nil {
		clock = time.Now
	}
	now := clock()
	d := &Source{clock: clock, start: now, last: now, kernel: demoKernel}
	d.bonds = newDemoBonds()
	d.resume(now)
	d.ovs = newDemoOVS()
	return d
}

func mac(last ...byte) [6]byte {
	m := [6]byte{0x02, 0x00, 0x5e, 0x10, 0x00, 0x00}
	copy(m[6-len(last):], last)
	return m
}

func newSimBond(name, mode, policy string, own [6]byte, slaves []string, speed int) *simBond {
	b := &simBond{
		name: name, mode: mode, policy: policy, mac: own, slaves: slaves,
		counters:     make(map[string]*[bonding.NumCounters]float64),
		loadCounters: make(map[string]*[bonding.NumCounters]float64),
		published:    make(map[string]*[bonding.NumCounters]uint64),
		linkDown:     make(map[string]bool),
		failures:     make(map[string]int),
		partnerLost:  make(map[string]bool),
		churned:      make(map[string]int),
	}
	for _, s := range append([]string{name}, slaves...) {
		b.counters[s] = new([bonding.NumCounters]float64)
		b.loadCounters[s] = new([bonding.NumCounters]float64)
		b.published[s] = new([bonding.NumCounters]uint64)
	}
	for range slaves {
		b.speeds = append(b.speeds, speed)
	}
	return b
}

// demoLACPBond: 4 x 10G, layer2, one gateway taking most traffic and a few
// peers on the local subnet.
func demoLACPBond() *simBond {
	b := newSimBond("bond0", bonding.Mode8023AD, "layer2", mac(0x0a, 0x01), []string{"ens1f0", "ens1f1", "ens2f0", "ens2f1"}, 10000)
	b.partnerMAC = [6]byte{0x00, 0x1c, 0x73, 0xaa, 0x3b, 0x01}
	gateway := mac(0xfe, 0x01)
	src := netip.MustParseAddr("10.20.0.11")
	// Backups and replication to the gateway's side: many flows, one MAC.
	for i := range 12 {
		b.flows = append(b.flows, simFlow{
			flow: bonding.Flow{SrcMAC: b.mac, DstMAC: gateway, Src: src, Dst: netip.AddrFrom4([4]byte{10, 30, byte(i), 5}),
				Proto: bonding.ProtoTCP, SrcPort: uint16(40000 + i), DstPort: 873},
			txBps: 0.9e9, rxBps: 0.12e9, pktBytes: 1400,
		})
	}
	// VMs behind a bridge on the bond: their own MACs and addresses,
	// forwarded traffic no socket of this host shows. They fetch from
	// the gateway's side, which sends much more than they do.
	for i := range 6 {
		vm := [6]byte{0x52, 0x54, 0x00, 0x7e, 0x00, byte(0x11 + i)}
		b.flows = append(b.flows, simFlow{
			flow: bonding.Flow{SrcMAC: vm, DstMAC: gateway, Src: netip.AddrFrom4([4]byte{10, 20, 1, byte(31 + i)}), Dst: netip.AddrFrom4([4]byte{10, 40, 0, byte(7 + i)}),
				Proto: bonding.ProtoTCP, SrcPort: uint16(51200 + 7*i), DstPort: 443},
			txBps: 0.15e9 + 0.05e9*float64(i), rxBps: 0.8e9, pktBytes: 1400, forwarded: true, ingress: 101 + i,
		})
	}
	// The switch's port channel hashes by source MAC (a common default):
	// every frame from the gateway arrives on one slave, whatever its
	// addresses, ports or destination VM.
	b.switchHash = func(f *bonding.Flow, usable int) int { return int(f.SrcMAC[5]) % usable }
	// Peers on the same subnet, each its own MAC.
	for i, last := range []byte{0x21, 0x22, 0x23, 0x24, 0x25} {
		b.flows = append(b.flows, simFlow{
			flow: bonding.Flow{SrcMAC: b.mac, DstMAC: mac(0x20, last), Src: src, Dst: netip.AddrFrom4([4]byte{10, 20, 0, 100 + byte(i)}),
				Proto: bonding.ProtoTCP, SrcPort: uint16(50000 + i), DstPort: 2049},
			txBps: 0.6e9 + 0.25e9*float64(i), rxBps: 0.9e9, pktBytes: 1200,
		})
	}
	return b
}

// demoActiveBackupBond: 2 x 1G with primary eno1.
func demoActiveBackupBond() *simBond {
	b := newSimBond("bond1", bonding.ModeActiveBackup, "", mac(0x0b, 0x01), []string{"eno1", "eno2"}, 1000)
	b.primary, b.active = "eno1", "eno1"
	src := netip.MustParseAddr("192.168.10.11")
	for i := range 3 {
		b.flows = append(b.flows, simFlow{
			flow: bonding.Flow{SrcMAC: b.mac, DstMAC: mac(0xfe, 0x0b), Src: src, Dst: netip.AddrFrom4([4]byte{192, 168, 10, byte(20 + i)}),
				Proto: bonding.ProtoTCP, SrcPort: uint16(33000 + i), DstPort: 22},
			txBps: 140e6, rxBps: 60e6, pktBytes: 900,
		})
	}
	return b
}

// newDemoBonds returns the demo's bonds as the script starts them.
func newDemoBonds() []*simBond {
	return []*simBond{demoLACPBond(), demoActiveBackupBond()}
}

// demoScriptPeriod is the length of the repeating incident script; it
// divides a day, so the script starts at every whole five minutes of UTC.
const demoScriptPeriod = 300 * time.Second

// script sets the bonds' state for wall-clock time t (since the Unix
// epoch): the incidents of the demo. The first two minutes show one about
// every 15 s; the next three hold incidents long enough for the shipped
// alert rules (contrib/prometheus) to fire, each with a `for:` of up to
// 2 minutes.
func script(bonds []*simBond, t time.Duration) {
	lacp, ab := bonds[0], bonds[1]
	phase := t % demoScriptPeriod

	// 30-60 s: ens2f0 loses link; flows rehash over the other three.
	lacp.setLink("ens2f0", !(phase >= 30*time.Second && phase < 60*time.Second))
	// 45-75 s: eno1 (the primary) loses link: failover to eno2, and back.
	ab.setLink("eno1", !(phase >= 45*time.Second && phase < 75*time.Second))
	if ab.linkDown["eno1"] {
		ab.active = "eno2"
	} else {
		ab.active = "eno1" // primary_reselect always: back to the primary
	}
	// 90-105 s: the switch stops sending LACPDUs on ens1f1: the port
	// defaults, leaves the aggregator and churns.
	lacp.setPartnerLost("ens1f1", phase >= 90*time.Second && phase < 105*time.Second)

	// The long incidents. 120-300 s: ens2f1's switch port leaves the
	// port-channel (BondtopLACPNotAggregating, BondtopDegraded).
	lacp.setPartnerLost("ens2f1", phase >= 120*time.Second)
	// 130-290 s: the standby eno2 loses link (BondtopSlaveDown).
	ab.setLink("eno2", !(phase >= 130*time.Second && phase < 290*time.Second))
	// 150-270 s: ens1f1 is down 20 s of every 30 s: never a whole minute,
	// four link failures (BondtopSlaveFlapping).
	flap := phase >= 150*time.Second && phase < 270*time.Second && (phase-150*time.Second)%(30*time.Second) < 20*time.Second
	lacp.setLink("ens1f1", !flap)
}

// setPartnerLost sets whether the slave hears its LACP partner, counting
// a churn on each loss.
func (b *simBond) setPartnerLost(slave string, lost bool) {
	if lost && !b.partnerLost[slave] {
		b.churned[slave]++
	}
	b.partnerLost[slave] = lost
}

// setLink sets a slave's link, counting a failure on each loss.
func (b *simBond) setLink(slave string, up bool) {
	if !up && !b.linkDown[slave] {
		b.failures[slave]++
	}
	b.linkDown[slave] = !up
}

// Read advances the simulation to now and reports it.
func (d *Source) Read() (collector.Reading, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock()
	dt := now.Sub(d.last).Seconds()
	d.last = now
	d.elapsed = now.Sub(d.start)
	if week, _ := weekOf(now); week != d.week {
		d.resume(now)
	}
	script(d.bonds, wallTime(now))
	var r collector.Reading
	for i, sb := range d.bonds {
		d.expireLoads(sb)
		b := sb.state()
		sb.now = now
		if dt > 0 {
			sb.advance(&b, d.kernel, dt)
			recordLoads(sb)
		}
		sb.fillCounters(&b, demoCounters().at(i, now))
		b.Kind = bonding.KindLinux
		r.Bonds = append(r.Bonds, b)
	}
	r.Bonds = append(r.Bonds, d.ovs.read(now))
	return r, nil
}

// Close ends nothing: the simulation has no resources.
func (d *Source) Close() error { return nil }

// ReadHost gives the simulated host's settings: Linux's defaults.
func (d *Source) ReadHost() model.Host { return model.Host{TCPReordering: new(3)} }

// state builds the bond as the kernel would show it now.
func (sb *simBond) state() bonding.Bond {
	b := bonding.Bond{
		Name: sb.name, Mode: new(sb.mode), MIIStatus: new("up"),
		MIIMonMs: new(100), UpDelayMs: new(0), DownDelayMs: new(0), PeerNotifyMs: new(0),
		MTU: new(9000), OperState: new("up"), DriverVersion: new("6.12.48+deb13-amd64"),
	}
	if sb.policy != "" {
		b.XmitHashPolicy = new(sb.policy)
	}
	if sb.mode == bonding.ModeActiveBackup {
		b.Primary, b.PrimaryReselect, b.ActiveSlave = new(sb.primary), new("always"), new(sb.active)
		b.FailOverMAC = new("none")
	}
	ownMAC := model.MAC(sb.mac)
	agg := 1
	inAgg := 0
	for i, name := range sb.slaves {
		up := !sb.linkDown[name]
		s := bonding.Slave{
			Name: name, MIIStatus: new("down"), State: new("backup"), MTU: new(9000), OperState: new("down"),
			LinkFailureCount: new(sb.failures[name]), PermHWAddr: new(model.MAC(mac(byte(0x40+len(sb.slaves)), byte(i+1)))), QueueID: new(0),
		}
		if up {
			s.MIIStatus, s.OperState = new("up"), new("up")
			s.SpeedMbps, s.Duplex = new(sb.speeds[i]), new("full")
		}
		switch sb.mode {
		case bonding.ModeActiveBackup:
			if name == sb.active {
				s.State = new("active")
			}
		case bonding.Mode8023AD:
			s.AggregatorID = new(1)
			s.ActorChurnState, s.PartnerChurnState = new("monitoring"), new("monitoring")
			s.ActorChurnedCount, s.PartnerChurnedCount = new(0), new(sb.churned[name])
			actor := bonding.StateActivity | bonding.StateShortTimeout | bonding.StateAggregation | bonding.StateSynchronization | bonding.StateCollecting | bonding.StateDistributing
			partner := actor
			partnerMAC, partnerKey := model.MAC(sb.partnerMAC), 1
			switch {
			case !up:
				actor = bonding.StateActivity | bonding.StateShortTimeout | bonding.StateAggregation | bonding.StateDefaulted
				partner = bonding.StateActivity
				partnerMAC, partnerKey = "00:00:00:00:00:00", 0
			case sb.partnerLost[name]:
				// No LACPDUs heard: defaulted, own aggregator, churned.
				actor = bonding.StateActivity | bonding.StateShortTimeout | bonding.StateAggregation | bonding.StateDefaulted
				partner = bonding.StateActivity
				partnerMAC, partnerKey = "00:00:00:00:00:00", 0
				s.AggregatorID = new(2 + i)
				s.PartnerChurnState = new("churned")
			default:
				s.State = new("active")
				inAgg++
			}
			s.Actor = &bonding.ActorPort{Port: bonding.Port{SystemPriority: new(65535), SystemMAC: new(ownMAC), Key: new(15),
				PortPriority: new(255), PortNumber: new(i + 1), PortState: new(actor)}}
			s.Partner = &bonding.PartnerPort{Port: bonding.Port{SystemPriority: new(32768), SystemMAC: new(partnerMAC), Key: new(partnerKey),
				PortPriority: new(32768), PortNumber: new(0x100 + i + 1), PortState: new(partner)}}
		default:
			if up {
				s.State = new("active")
			}
		}
		b.Slaves = append(b.Slaves, s)
	}
	if sb.mode == bonding.Mode8023AD {
		b.LACP = &bonding.LACP{
			Active: new(true), Rate: new("fast"), MinLinks: new(0), ADSelect: new("stable"),
			SystemPriority: new(65535), SystemMAC: new(ownMAC),
			AggregatorID: new(agg), NumPorts: new(inAgg), ActorKey: new(15), PartnerKey: new(1),
			PartnerMAC: new(model.MAC(sb.partnerMAC)),
		}
	}
	return b
}

// advance adds dt seconds of traffic to the counters: each flow on the
// slave the kernel's hash picks, each slave capped at its speed.
func (sb *simBond) advance(b *bonding.Bond, k bonding.KernelVersion, dt float64) {
	pred, err := bonding.NewPredictor(b, k)
	if err != nil {
		return
	}
	index := make(map[string]int, len(sb.slaves))
	for i, s := range sb.slaves {
		index[s] = i
	}
	offeredTx := make([]float64, len(sb.slaves))
	offeredRx := make([]float64, len(sb.slaves))
	egress := make([]int, len(sb.flows))
	ingress := make([]int, len(sb.flows))
	for i := range sb.flows {
		f := &sb.flows[i]
		egress[i], ingress[i] = -1, -1
		if c, err := pred.Predict(&f.flow); err == nil && c.Slave != "" {
			egress[i] = index[c.Slave]
			offeredTx[egress[i]] += f.txBps
		}
		// The switch hashes the return traffic with its own function; the
		// same hash over the reversed frame is a fair stand-in.
		back := f.flow
		back.SrcMAC, back.DstMAC = f.flow.DstMAC, f.flow.SrcMAC
		back.Src, back.Dst = f.flow.Dst, f.flow.Src
		back.SrcPort, back.DstPort = f.flow.DstPort, f.flow.SrcPort
		if sb.switchHash != nil && len(pred.Usable) > 0 && sb.mode == bonding.Mode8023AD {
			ingress[i] = index[pred.Usable[sb.switchHash(&back, len(pred.Usable))]]
			offeredRx[ingress[i]] += f.rxBps
		} else if c, err := pred.Predict(&back); err == nil && c.Slave != "" {
			ingress[i] = index[c.Slave]
			offeredRx[ingress[i]] += f.rxBps
		}
	}
	// A slave carries at most 96% of its speed; flows on it share that.
	scale := func(offered float64, slave int) float64 {
		capBps := float64(sb.speeds[slave]) * 1e6 * 0.96
		if offered <= capBps || offered == 0 {
			return 1
		}
		return capBps / offered
	}
	for i := range sb.flows {
		f := &sb.flows[i]
		if e := egress[i]; e >= 0 {
			bytes := f.txBps * scale(offeredTx[e], e) * dt / 8
			f.sent += bytes
			sb.count(f, sb.slaves[e], bonding.TxBytes, bonding.TxPackets, bytes)
			sb.meter(f, e, false, bytes)
		}
		if in := ingress[i]; in >= 0 {
			bytes := f.rxBps * scale(offeredRx[in], in) * dt / 8
			f.received += bytes
			sb.count(f, sb.slaves[in], bonding.RxBytes, bonding.RxPackets, bytes)
			sb.meter(f, in, true, bytes)
		}
	}
	// Background: multicast and LACPDUs reach every slave that has link,
	// the active-backup standby included; a saturated slave overruns.
	for i, s := range sb.slaves {
		if sb.linkDown[s] {
			continue
		}
		c := sb.counters[s]
		c[bonding.RxBytes] += 12_000 * dt
		c[bonding.RxPackets] += 40 * dt
		if offeredRx[i] > float64(sb.speeds[i])*1e6*0.96 {
			c[bonding.RxDropped] += 35 * dt
			c[bonding.RxFifoErrors] += 12 * dt
		}
	}
}

// count adds a flow's bytes (and packets) to the slave and the bond; a
// test stream's also to the load counters, which the wall clock's
// counters do not hold.
func (sb *simBond) count(f *simFlow, slave string, bytesC, packetsC bonding.Counter, bytes float64) {
	for _, name := range []string{slave, sb.name} {
		c := sb.counters[name]
		c[bytesC] += bytes
		c[packetsC] += bytes / f.pktBytes
		if f.stream != nil {
			l := sb.loadCounters[name]
			l[bytesC] += bytes
			l[packetsC] += bytes / f.pktBytes
		}
	}
}

// fillCounters sets b's counters: the wall clock's (clock, one row per
// interface: the bond, then its slaves) plus the test streams'. A counter
// never goes back within a run, whatever the rounding.
func (sb *simBond) fillCounters(b *bonding.Bond, clock [][bonding.NumCounters]float64) {
	set := func(cs *bonding.Counters, name string, row *[bonding.NumCounters]float64) {
		load, last := sb.loadCounters[name], sb.published[name]
		for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
			v := max(uint64(math.Floor(row[c]+load[c])), last[c])
			last[c] = v
			cs.Set(c, v)
		}
	}
	set(&b.Counters, sb.name, &clock[0])
	for i := range b.Slaves {
		set(&b.Slaves[i].Counters, b.Slaves[i].Name, &clock[1+i])
	}
}
