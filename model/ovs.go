package model

import (
	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/ovs"
)

// FromOVS turns an OVS bond into the common model. Members keep OVS's
// order (by name); Slave.State is "active" for a member OVS sends on
// (for active-backup: the active member) and "backup" otherwise, as the
// kernel says of 802.3ad slaves outside the active aggregator.
func FromOVS(o *ovs.Bond) bonding.Bond {
	b := bonding.Bond{Name: o.Name, Kind: bonding.KindOVS, Bridge: strPtr(o.Bridge), Mode: strPtr(o.Mode)}
	b.OVS = &bonding.OVSBond{LACP: o.LACP, LACPStatus: o.LACPStatus, FallbackAB: o.FallbackAB, RebalanceMs: o.RebalanceMs}
	b.UpDelayMs, b.DownDelayMs = intPtr(o.UpDelayMs), intPtr(o.DownDelayMs)
	if o.ActiveMember != "" {
		b.ActiveSlave = strPtr(o.ActiveMember)
	}
	up := false
	attached := 0
	var partner string
	for i := range o.Members {
		m := &o.Members[i]
		sl := bonding.Slave{Name: m.Name, OVS: &bonding.OVSMember{Enabled: m.Enabled, MayEnable: m.MayEnable, OFPort: m.OFPort}}
		if m.LinkState != "" {
			sl.MIIStatus = strPtr(m.LinkState)
		}
		if m.Known {
			state := "backup"
			if (o.Mode == bonding.OVSActiveBackup && m.Active) || (o.Mode != bonding.OVSActiveBackup && m.Enabled) {
				state = "active"
			}
			sl.State = strPtr(state)
			up = up || m.Enabled
		} else {
			up = up || m.LinkState == "up"
		}
		if m.LinkSpeed != nil && *m.LinkSpeed > 0 {
			sl.SpeedMbps = intPtr(int(*m.LinkSpeed / 1_000_000))
		}
		if m.MAC != "" {
			sl.PermHWAddr = strPtr(m.MAC)
		}
		for _, bk := range m.Buckets {
			sl.OVS.Buckets = append(sl.OVS.Buckets, bonding.OVSBucket{Hash: bk.Hash, LoadKB: bk.LoadKB})
		}
		if m.LACPStats != nil {
			rx, tx := m.LACPStats.RxPDUs, m.LACPStats.TxPDUs
			sl.OVS.LACPRxPDUs, sl.OVS.LACPTxPDUs = &rx, &tx
		}
		if m.LACP != nil {
			sl.OVS.LACPStatus = m.LACP.Status
			sl.Actor = &bonding.ActorPort{Port: lacpPort(&m.LACP.Actor)}
			sl.Partner = &bonding.PartnerPort{Port: lacpPort(&m.LACP.Partner)}
			if m.LACP.Attached() {
				attached++
				if partner == "" {
					partner = m.LACP.Partner.SysID
				}
			}
		}
		b.Slaves = append(b.Slaves, sl)
	}
	mii := "down"
	if up {
		mii = "up"
	}
	b.MIIStatus = strPtr(mii)
	if o.LACP == "active" || o.LACP == "passive" {
		active := o.LACP == "active"
		l := &bonding.LACP{Active: &active, Rate: strPtr(o.LACPTime), NumPorts: intPtr(attached)}
		if o.SysID != "" {
			l.SystemMAC, l.SystemPriority, l.ActorKey = strPtr(o.SysID), intPtr(o.SysPriority), intPtr(o.AggregationKey)
		}
		if partner != "" && partner != "00:00:00:00:00:00" {
			l.PartnerMAC = strPtr(partner)
		}
		l.NoActiveAggregator = o.LACPStatus == "configured" && attached == 0
		b.LACP = l
	}
	return b
}

func lacpPort(p *ovs.LACPPort) bonding.Port {
	st := bonding.PortState(p.State)
	return bonding.Port{SystemPriority: intPtr(p.SysPriority), SystemMAC: strPtr(p.SysID), Key: intPtr(p.Key),
		PortPriority: intPtr(p.PortPriority), PortNumber: intPtr(p.PortID), PortState: &st}
}

func strPtr(s string) *string { return &s }
func intPtr(n int) *int       { return &n }

// SumMemberCounters gives an OVS bond its own counters: the sum of its
// members'. OVS has no bond device whose counters could differ, so the
// sum is what crossed the bond. A counter some member lacks stays absent.
func SumMemberCounters(b *bonding.Bond) {
	var sum bonding.Counters
	for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
		var total uint64
		have := len(b.Slaves) > 0
		for i := range b.Slaves {
			v, ok := b.Slaves[i].Counters.Get(c)
			if !ok {
				have = false
				break
			}
			total += v
		}
		if have {
			sum.Set(c, total)
		}
	}
	b.Counters = sum
}
