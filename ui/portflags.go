package ui

import "github.com/bondtop/bondtop/bonding"

// portFlagLetters name the LACP port state bits, lowest first, as one
// column each: Activity, shorT timeout, aGgregation, Sync, Collecting,
// Distributing, deFaulted, Expired.
const portFlagLetters = "ATGSCDFE"

// portFlags writes a port state as "ATGSCD..": a letter for each set bit,
// "." for each clear one. Bits a healthy port needs (activity, aggregation,
// synchronization, collecting, distributing) are highlighted when missing,
// defaulted and expired when present; short timeout is a setting and never
// highlighted. nil (not readable) is "-".
//
// The line for each of the 256 states is made once per theme and shared:
// the slave table and the LACP panel ask for several a frame. It is
// clipped, so a caller's append copies it.
func portFlags(ps *bonding.PortState, th *theme) line {
	if ps == nil {
		return line{{"-", th.dim}}
	}
	if l := th.portFlags[*ps]; l != nil {
		return l
	}
	l := makePortFlags(*ps, th)
	th.portFlags[*ps] = l
	return l
}

func makePortFlags(ps bonding.PortState, th *theme) line {
	const needed = bonding.StateActivity | bonding.StateAggregation | bonding.StateSynchronization |
		bonding.StateCollecting | bonding.StateDistributing
	const alarming = bonding.StateDefaulted | bonding.StateExpired
	l := make(line, 0, 8)
	for i := range 8 {
		bit := bonding.PortState(1) << i
		set := ps&bit != 0
		ch, st := ".", th.dim
		if set {
			ch, st = portFlagLetters[i:i+1], th.base
		}
		switch {
		case !set && needed&bit != 0:
			ch, st = "-", th.bad
		case set && alarming&bit != 0:
			st = th.bad
		}
		l = l.add(ch, st)
	}
	return l
}

// zeroMAC is what the kernel shows for a partner it never heard from.
const zeroMAC = "00:00:00:00:00:00"
