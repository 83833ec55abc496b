package collector

import (
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/ovs"
)

// demoOVS is the demo's Open vSwitch bond, as on an OpenStack network
// node: ovs-bond0 on br-ex, balance-tcp with LACP (fast) over two 25G
// members. A storage replication stream hashes into bucket 37 and carries
// most of the bond: the case rebalancing cannot help. At 10-25 s of each
// script period the switch stops sending LACPDUs on ens3f1: OVS disables
// it and moves its buckets to ens3f0.
//
// It is built as ovs.Bond values and turned into the common model by
// FromOVS, the live path's own conversion.
type demoOVS struct {
	members  []string
	counters map[string]*[bonding.NumCounters]float64
	buckets  []demoBucket
	lost     bool // ens3f1's partner went silent
}

// demoBucket is one busy hash bucket: its transmit rate and the member
// OVS last assigned it to (index into members).
type demoBucket struct {
	hash   int
	txBps  float64
	member int
}

func newDemoOVS() *demoOVS {
	d := &demoOVS{members: []string{"ens3f0", "ens3f1"}, counters: map[string]*[bonding.NumCounters]float64{}}
	for _, m := range d.members {
		c := new([bonding.NumCounters]float64)
		c[bonding.RxBytes], c[bonding.TxBytes] = 5.2e11, 6.1e11
		c[bonding.RxPackets], c[bonding.TxPackets] = 4.1e8, 4.7e8
		d.counters[m] = c
	}
	// Bucket 37: the replication stream; the rest: tenant traffic.
	d.buckets = []demoBucket{{37, 9.0e9, 1}}
	for i, h := range []int{3, 18, 60, 91, 122, 140, 177, 203, 230, 251} {
		d.buckets = append(d.buckets, demoBucket{h, 0.35e9 + 0.05e9*float64(i%3), i % 2})
	}
	return d
}

// read advances the counters by dt seconds at script time phase and
// returns the bond.
func (d *demoOVS) read(dt float64, phase time.Duration) bonding.Bond {
	d.lost = phase >= 10*time.Second && phase < 25*time.Second
	enabled := []bool{true, !d.lost}
	loads := make([]float64, len(d.members))
	for _, bk := range d.buckets {
		m := bk.member
		if !enabled[m] {
			m = 0 // OVS moves a disabled member's buckets
		}
		loads[m] += bk.txBps
	}
	for i, name := range d.members {
		c := d.counters[name]
		tx := loads[i] / 8 * dt
		rx := tx * 0.4
		c[bonding.TxBytes] += tx
		c[bonding.RxBytes] += rx
		c[bonding.TxPackets] += tx / 8000 // jumbo frames on the storage network
		c[bonding.RxPackets] += rx / 8000
	}

	sysID, partnerID := "02:00:5e:10:0e:01", "00:1c:73:aa:3b:02"
	healthy := uint8(bonding.StateActivity | bonding.StateShortTimeout | bonding.StateAggregation |
		bonding.StateSynchronization | bonding.StateCollecting | bonding.StateDistributing)
	ob := ovs.Bond{Name: "ovs-bond0", Bridge: "br-ex", Mode: bonding.OVSBalanceTCP, LACP: "active", LACPTime: "fast",
		LACPStatus: "negotiated", RebalanceMs: ovs.DefaultRebalanceMs, ActiveMember: "ens3f0",
		SysID: sysID, SysPriority: 65534, AggregationKey: 1}
	for i, name := range d.members {
		speed := int64(25_000_000_000)
		ofport := int64(i + 1)
		cur := true
		m := ovs.Member{Name: name, OFPort: &ofport, LinkState: "up", AdminState: "up", LinkSpeed: &speed, LACPCurrent: &cur,
			Known: true, Enabled: enabled[i], MayEnable: enabled[i], Active: name == ob.ActiveMember}
		m.LACP = &ovs.LACPMemberShow{Name: name, Status: "current attached", PortID: i + 1, PortPriority: 65535, MayEnable: enabled[i],
			Actor:   ovs.LACPPort{SysID: sysID, SysPriority: 65534, PortID: i + 1, PortPriority: 65535, Key: 1, State: healthy},
			Partner: ovs.LACPPort{SysID: partnerID, SysPriority: 32768, PortID: 0x100 + i + 1, PortPriority: 32768, Key: 12, State: healthy}}
		if !enabled[i] {
			cur = false
			m.LACP.Status = "defaulted detached"
			m.LACP.Actor.State = uint8(bonding.StateActivity|bonding.StateShortTimeout|bonding.StateAggregation) | uint8(bonding.StateDefaulted)
			m.LACP.Partner = ovs.LACPPort{}
		}
		for _, bk := range d.buckets {
			owner := bk.member
			if !enabled[owner] {
				owner = 0
			}
			if owner == i {
				// bond/show's load: kB since the last rebalance.
				m.Buckets = append(m.Buckets, ovs.Bucket{Hash: bk.hash, LoadKB: int64(bk.txBps / 8 * float64(ob.RebalanceMs) / 1000 / 1024)})
			}
		}
		ob.Members = append(ob.Members, m)
	}
	b := FromOVS(&ob)
	for i := range b.Slaves {
		s := &b.Slaves[i]
		c := d.counters[s.Name]
		for k := range bonding.NumCounters {
			s.Counters.Set(bonding.Counter(k), uint64(c[k]))
		}
		s.OperState, s.MTU = new("up"), new(9000)
	}
	sumMemberCounters(&b)
	b.OperState, b.MTU = new("up"), new(9000)
	return b
}
