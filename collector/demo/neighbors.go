package demo

import (
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/neighbors"
)

// The demo's switches: bond0's four slaves go to two leaves of an MLAG
// pair (one LACP system, the partner MAC of the script), bond1's two to an
// access switch whose ports take standard frames only while bond1 runs
// MTU 9000 — one of the two switch-side faults the demo shows; the other
// is the LACPDU silence on ens1f1 while the script's partner is lost.
var demoNeighbors = map[string]neighbors.Neighbor{
	"ens1f0": demoLeaf("leaf-a", "02:1c:73:aa:00:0a", "192.0.2.10", "Ethernet1/1", 9216, true, 10),
	"ens1f1": demoLeaf("leaf-a", "02:1c:73:aa:00:0a", "192.0.2.10", "Ethernet1/2", 9216, true, 10),
	"ens2f0": demoLeaf("leaf-b", "02:1c:73:aa:00:0b", "192.0.2.11", "Ethernet1/1", 9216, true, 10),
	"ens2f1": demoLeaf("leaf-b", "02:1c:73:aa:00:0b", "192.0.2.11", "Ethernet1/2", 9216, true, 10),
	"eno1":   demoLeaf("access-3", "02:00:0c:33:00:03", "192.0.2.33", "Gi1/0/17", 1522, false, 30),
	"eno2":   demoLeaf("access-3", "02:00:0c:33:00:03", "192.0.2.33", "Gi1/0/18", 1522, false, 30),
	// ovs-bond0's members (ovs.go) on a third leaf.
	"ens3f0": demoLeaf("leaf-c", "02:1c:73:aa:00:0c", "192.0.2.12", "Ethernet1/5", 9216, true, 20),
	"ens3f1": demoLeaf("leaf-c", "02:1c:73:aa:00:0c", "192.0.2.12", "Ethernet1/6", 9216, true, 20),
}

func demoLeaf(system, chassis, mgmt, port string, maxFrame int, lag bool, pvid int) neighbors.Neighbor {
	descr := "Arista Networks EOS version 4.31.2F running on an Arista Networks DCS-7050SX3-48YC8"
	if !lag {
		descr = "Cisco IOS Software [Cupertino], Catalyst L3 Switch Software (CAT9K_IOSXE), Version 17.9.4a"
	}
	n := neighbors.Neighbor{
		Protocol: neighbors.ProtoLLDP, ChassisID: chassis, ChassisIDSubtype: "mac",
		SystemName: &system, SystemDescription: &descr, PortID: port, PortIDSubtype: "ifname",
		ManagementAddresses: []string{mgmt},
		PortVLANID:          &pvid, VLANs: []neighbors.VLAN{{ID: pvid, Name: "servers"}},
		MaxFrameSize: &maxFrame, Aggregation: &neighbors.Aggregation{Capable: true, Enabled: lag},
		Autoneg: &neighbors.Autoneg{Supported: true, Enabled: !lag}, TTLSeconds: 120,
		PortDescription: &port,
	}
	if lag {
		id := 1000
		n.Aggregation.PortID = &id
	}
	return n
}

var (
	_ collector.NeighborReader    = (*Source)(nil)
	_ collector.PortCounterReader = (*Source)(nil)
)

// Watch implements collector.NeighborReader: the demo always hears its
// switches.
func (d *Source) Watch([]string) error { return nil }

// Neighbor implements collector.NeighborReader: the switch sends every
// 30 s. The copy shares the table's slices, as the live one shares a
// decoded frame's: neither is ever written.
func (d *Source) Neighbor(slave string, _ time.Time, into *neighbors.Neighbor) bool {
	n, ok := demoNeighbors[slave]
	if !ok {
		return false
	}
	d.mu.Lock()
	since := d.sinceWeek()
	d.mu.Unlock()
	*into = n
	into.AgeSeconds = (since % (30 * time.Second)).Seconds()
	return true
}

// LACPDUAge implements collector.NeighborReader: the demo's LACPDU ages
// come from its counters, as on a host without CAP_NET_RAW.
func (d *Source) LACPDUAge(string, time.Time) (time.Duration, bool) { return 0, false }

// HeardLACPDU implements collector.NeighborReader: the demo decodes no
// frames.
func (d *Source) HeardLACPDU(string, *neighbors.LACPDU) bool { return false }

// CarrierCounts implements collector.PortCounterReader: each link loss
// of the script is a carrier down.
func (d *Source) CarrierCounts(slaves []string, into map[string]*bonding.CarrierCounts) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, sb := range d.bonds {
		for _, name := range sb.slaves {
			c := &bonding.CarrierCounts{Up: uint64(1 + sb.failures[name]), Down: uint64(sb.failures[name])}
			if sb.linkDown[name] {
				c.Up--
			}
			into[name] = c
		}
	}
}

// LACPDUCounters implements collector.PortCounterReader: the LACP
// partner sends every second (lacp_rate fast) except while the script
// has it lost.
func (d *Source) LACPDUCounters(slaves []string, into map[string]bonding.LACPDUCounters) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, sb := range d.bonds {
		if sb.mode != bonding.Mode8023AD {
			continue
		}
		for _, name := range sb.slaves {
			since := d.sinceWeek()
			tx := uint64(since / time.Second)
			rx := tx
			switch name {
			case "ens1f1":
				rx = demoHeardSeconds(since, 90*time.Second, 105*time.Second)
			case "ens2f1":
				rx = demoHeardSeconds(since, 120*time.Second, demoScriptPeriod)
			}
			into[name] = bonding.LACPDUCounters{Rx: rx, Tx: tx}
		}
	}
}

// demoHeardSeconds counts the seconds of t (since the week began, when
// the script starts too) in which a slave's partner was talking: all but
// from-to of each script period, the script's partner loss (script in
// demo.go).
func demoHeardSeconds(t, from, to time.Duration) uint64 {
	periods := t / demoScriptPeriod
	phase := t % demoScriptPeriod
	heard := periods * (demoScriptPeriod - (to - from))
	heard += min(phase, from) + max(0, phase-to)
	return uint64(heard / time.Second)
}

// sinceWeek is the time of the last Read since its week began: the
// demo's counters count from there (clock.go), so a restarted demo
// continues them. The caller holds d.mu.
func (d *Source) sinceWeek() time.Duration {
	_, s := weekOf(d.last)
	return time.Duration(s * float64(time.Second))
}
