package demo

import (
	"math"
	"slices"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
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
	members []string
	buckets []demoBucket
	lost    bool // ens3f1's partner went silent
}

// The window of each script period in which ens3f1's partner is silent.
const (
	demoOVSLostFrom = 10 * time.Second
	demoOVSLostTo   = 25 * time.Second
)

// demoBucket is one busy hash bucket: its transmit rate and the member
// OVS last assigned it to (index into members).
type demoBucket struct {
	hash   int
	txBps  float64
	member int
}

func newDemoOVS() *demoOVS {
	d := &demoOVS{members: []string{"ens3f0", "ens3f1"}}
	// Bucket 37: the replication stream; the rest: tenant traffic.
	d.buckets = []demoBucket{{37, 9.0e9, 1}}
	for i, h := range []int{3, 18, 60, 91, 122, 140, 177, 203, 230, 251} {
		d.buckets = append(d.buckets, demoBucket{h, 0.35e9 + 0.05e9*float64(i%3), i % 2})
	}
	return d
}

// lostSeconds is how long ens3f1 was disabled in the first s seconds
// of the week (the script starts with the week: 300 s divides it).
func lostSeconds(s float64) float64 {
	period := demoScriptPeriod.Seconds()
	whole := math.Floor(s / period)
	in := s - whole*period
	return whole*(demoOVSLostTo-demoOVSLostFrom).Seconds() +
		min(max(in-demoOVSLostFrom.Seconds(), 0), (demoOVSLostTo-demoOVSLostFrom).Seconds())
}

// counters are a member's counters at now: like the Linux bonds'
// (clock.go), a function of the wall clock since the week began,
// so a restarted demo continues them. While ens3f1 is disabled its
// buckets' load moves to ens3f0.
func (d *demoOVS) counters(i int, now time.Time) [bonding.NumCounters]float64 {
	_, s := weekOf(now)
	lost := lostSeconds(s)
	var own, moved float64 // bytes a second of each member's buckets
	for _, bk := range d.buckets {
		if bk.member == 0 {
			own += bk.txBps / 8
		} else {
			moved += bk.txBps / 8
		}
	}
	tx := own*s + moved*lost
	if i == 1 {
		tx = moved * (s - lost)
	}
	var c [bonding.NumCounters]float64
	c[bonding.TxBytes], c[bonding.RxBytes] = tx, tx*0.4
	c[bonding.TxPackets], c[bonding.RxPackets] = tx/8000, tx*0.4/8000 // jumbo frames on the storage network
	return c
}

// read returns the bond as it is at now.
func (d *demoOVS) read(now time.Time) bonding.Bond {
	phase := wallTime(now) % demoScriptPeriod
	d.lost = phase >= demoOVSLostFrom && phase < demoOVSLostTo
	enabled := []bool{true, !d.lost}

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
	b := model.FromOVS(&ob)
	for i := range b.Slaves {
		s := &b.Slaves[i]
		c := d.counters(slices.Index(d.members, s.Name), now)
		for k := range bonding.NumCounters {
			s.Counters.Set(bonding.Counter(k), uint64(c[k]))
		}
		s.OperState, s.MTU = new("up"), new(9000)
	}
	model.SumMemberCounters(&b)
	b.OperState, b.MTU = new("up"), new(9000)
	return b
}
