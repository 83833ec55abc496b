package bonding

// Merge fills the fields of dst that are nil with those of src: sources
// are merged from the most to the least trusted, each adding only what the
// earlier ones lacked. Slaves are matched by name; dst keeps its order and
// slaves only src knows are appended. Counters are taken from src when dst
// has none.
func Merge(dst *Bond, src *Bond) {
	fill(&dst.Mode, src.Mode)
	fill(&dst.XmitHashPolicy, src.XmitHashPolicy)
	fill(&dst.MIIStatus, src.MIIStatus)
	fill(&dst.MIIMonMs, src.MIIMonMs)
	fill(&dst.UpDelayMs, src.UpDelayMs)
	fill(&dst.DownDelayMs, src.DownDelayMs)
	fill(&dst.PeerNotifyMs, src.PeerNotifyMs)
	fill(&dst.ARPIntervalMs, src.ARPIntervalMs)
	if dst.ARPTargets == nil {
		dst.ARPTargets = src.ARPTargets
	}
	fill(&dst.Primary, src.Primary)
	fill(&dst.PrimaryReselect, src.PrimaryReselect)
	fill(&dst.ActiveSlave, src.ActiveSlave)
	fill(&dst.FailOverMAC, src.FailOverMAC)
	fill(&dst.TLBDynamicLB, src.TLBDynamicLB)
	fill(&dst.MTU, src.MTU)
	fill(&dst.OperState, src.OperState)
	fill(&dst.DriverVersion, src.DriverVersion)
	if src.LACP != nil {
		if dst.LACP == nil {
			dst.LACP = &LACP{}
		}
		mergeLACP(dst.LACP, src.LACP)
	}
	if dst.Counters.Empty() {
		dst.Counters = src.Counters
	}
	for i := range src.Slaves {
		s := &src.Slaves[i]
		if d := dst.Slave(s.Name); d != nil {
			mergeSlave(d, s)
		} else {
			dst.Slaves = append(dst.Slaves, *s)
		}
	}
}

func mergeLACP(dst, src *LACP) {
	fill(&dst.Active, src.Active)
	fill(&dst.Rate, src.Rate)
	fill(&dst.MinLinks, src.MinLinks)
	fill(&dst.ADSelect, src.ADSelect)
	fill(&dst.SystemPriority, src.SystemPriority)
	fill(&dst.SystemMAC, src.SystemMAC)
	dst.NoActiveAggregator = dst.NoActiveAggregator || src.NoActiveAggregator
	fill(&dst.AggregatorID, src.AggregatorID)
	fill(&dst.NumPorts, src.NumPorts)
	fill(&dst.ActorKey, src.ActorKey)
	fill(&dst.PartnerKey, src.PartnerKey)
	fill(&dst.PartnerMAC, src.PartnerMAC)
}

func mergeSlave(dst, src *Slave) {
	fill(&dst.MIIStatus, src.MIIStatus)
	fill(&dst.State, src.State)
	fill(&dst.SpeedMbps, src.SpeedMbps)
	fill(&dst.Duplex, src.Duplex)
	fill(&dst.MTU, src.MTU)
	fill(&dst.OperState, src.OperState)
	fill(&dst.LinkFailureCount, src.LinkFailureCount)
	fill(&dst.PermHWAddr, src.PermHWAddr)
	fill(&dst.QueueID, src.QueueID)
	fill(&dst.AggregatorID, src.AggregatorID)
	fill(&dst.ActorChurnState, src.ActorChurnState)
	fill(&dst.PartnerChurnState, src.PartnerChurnState)
	fill(&dst.ActorChurnedCount, src.ActorChurnedCount)
	fill(&dst.PartnerChurnedCount, src.PartnerChurnedCount)
	if src.Actor != nil {
		if dst.Actor == nil {
			dst.Actor = &ActorPort{}
		}
		mergePort(&dst.Actor.Port, &src.Actor.Port)
	}
	if src.Partner != nil {
		if dst.Partner == nil {
			dst.Partner = &PartnerPort{}
		}
		mergePort(&dst.Partner.Port, &src.Partner.Port)
	}
	if dst.Counters.Empty() {
		dst.Counters = src.Counters
	}
}

func mergePort(dst, src *Port) {
	fill(&dst.SystemPriority, src.SystemPriority)
	fill(&dst.SystemMAC, src.SystemMAC)
	fill(&dst.Key, src.Key)
	fill(&dst.PortPriority, src.PortPriority)
	fill(&dst.PortNumber, src.PortNumber)
	fill(&dst.PortState, src.PortState)
}

// fill sets *dst to src when *dst is nil.
func fill[T any](dst **T, src *T) {
	if *dst == nil {
		*dst = src
	}
}
