package collector

import (
	"time"

	"github.com/bondtop/bondtop/bonding"
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
		PortVLANID:          &pvid, VLANs: []VLAN{{ID: pvid, Name: "servers"}},
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

// VLAN is the neighbours' VLAN type, named here for the demo's table.
type VLAN = neighbors.VLAN

var (
	_ NeighborReader    = (*DemoSource)(nil)
	_ PortCounterReader = (*DemoSource)(nil)
)

// Watch implements NeighborReader: the demo always hears its switches.
func (d *DemoSource) Watch([]string) error { return nil }

// Neighbor implements NeighborReader: the switch sends every 30 s.
func (d *DemoSource) Neighbor(slave string) *neighbors.Neighbor {
	n, ok := demoNeighbors[slave]
	if !ok {
		return nil
	}
	d.mu.Lock()
	elapsed := d.elapsed
	d.mu.Unlock()
	n.AgeSeconds = (elapsed % (30 * time.Second)).Seconds()
	n.ManagementAddresses = append([]string(nil), n.ManagementAddresses...)
	n.VLANs = append([]VLAN(nil), n.VLANs...)
	return &n
}

// LACPDUAge implements NeighborReader: the demo's LACPDU ages come from
// its counters, as on a host without CAP_NET_RAW.
func (d *DemoSource) LACPDUAge(string) (time.Duration, bool) { return 0, false }

// HeardLACPDU implements NeighborReader: the demo decodes no frames.
func (d *DemoSource) HeardLACPDU(string) *neighbors.LACPDU { return nil }

// PortCounters implements PortCounterReader: the LACP partner sends every
// second (lacp_rate fast) except while the script has it lost; each link
// loss of the script is a carrier down.
func (d *DemoSource) PortCounters(slaves []string) map[string]PortCounters {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]PortCounters{}
	for _, sb := range d.bonds {
		for _, name := range sb.slaves {
			pc := PortCounters{Carrier: &bonding.CarrierCounts{Up: uint64(1 + sb.failures[name]), Down: uint64(sb.failures[name])}}
			if sb.linkDown[name] {
				pc.Carrier.Up--
			}
			if sb.mode == bonding.Mode8023AD {
				tx := uint64(d.elapsed / time.Second)
				rx := tx
				if name == "ens1f1" {
					rx = demoHeardSeconds(d.elapsed)
				}
				const before = 86400 // a host that has been up a day
				pc.LACPDU = &bonding.LACPDUCounters{Rx: before + rx, Tx: before + tx}
			}
			out[name] = pc
		}
	}
	return out
}

// demoHeardSeconds counts the seconds of t in which ens1f1's partner was
// talking: all but 90-105 s of each script period.
func demoHeardSeconds(t time.Duration) uint64 {
	periods := t / demoScriptPeriod
	phase := t % demoScriptPeriod
	heard := periods * (demoScriptPeriod - 15*time.Second)
	heard += min(phase, 90*time.Second) + max(0, phase-105*time.Second)
	return uint64(heard / time.Second)
}
