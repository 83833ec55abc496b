package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/format"
)

// The switch's side of each slave: a SWITCH column in the slaves table,
// each slave's LLDP/CDP neighbour beside its LACP partner, and every TLV,
// the LACPDU counters and the carrier counts in the slave's details.

// switchNameWidth caps the SWITCH column: a long system name must not
// push the rate columns off the screen.
const switchNameWidth = 28

// switchColumn shows "system port" as the switch tells it, "no LLDP" when
// bondtop listens and hears nothing, "-" (dropped when every slave has it)
// for sources that do not listen.
func switchColumn(th *theme, b *model.BondSample) *column {
	return &column{title: "SWITCH", priority: 65, cell: func(r SlaveRow) line {
		if r.SwitchSide == nil {
			return line{{"-", th.dim}}
		}
		if r.Neighbor == nil {
			return line{{"no LLDP", th.dim}}
		}
		return line{{truncate(neighborLabel(r.Neighbor), switchNameWidth), neighborStyle(th, b, r.SlaveSample)}}
	}}
}

// neighborLabel is "system port", the chassis id standing in for a
// system without a name.
func neighborLabel(n *neighbors.Neighbor) string {
	name := n.ChassisID
	if n.SystemName != nil && *n.SystemName != "" {
		name = *n.SystemName
	}
	return name + " " + n.PortID
}

// neighborTrouble says what the switch port's own words contradict in the
// bond's setup ("" when nothing).
func neighborTrouble(b *model.BondSample, s *model.SlaveSample) string {
	n := s.Neighbor
	var why []string
	if n.Aggregation != nil && b != nil {
		if b.Is8023AD() && !n.Aggregation.Enabled {
			why = append(why, "port not in a LAG")
		}
		if format.Deref(b.Mode) == "balance-xor" && n.Aggregation.Enabled {
			why = append(why, "port in a LAG")
		}
	}
	if n.MaxFrameSize != nil && b != nil && b.MTU != nil && *n.MaxFrameSize < *b.MTU+18 {
		why = append(why, fmt.Sprintf("max frame %d < MTU %d", *n.MaxFrameSize, *b.MTU))
	}
	return strings.Join(why, ", ")
}

func neighborStyle(th *theme, b *model.BondSample, s *model.SlaveSample) *tcell.Style {
	if neighborTrouble(b, s) != "" {
		return th.bad
	}
	return th.base
}

// neighborBeside is what the LACP panel shows after a slave's partner:
// the switch port LLDP names, marked when it contradicts the bond.
func neighborBeside(th *theme, b *model.BondSample, s *model.SlaveSample) line {
	if s.SwitchSide == nil {
		return nil
	}
	l := line{{" │ ", th.dim}}
	if s.Neighbor == nil {
		return l.add("no LLDP", th.dim)
	}
	l = l.add(neighborLabel(s.Neighbor), neighborStyle(th, b, s))
	if why := neighborTrouble(b, s); why != "" {
		l = l.add(" ("+why+")", th.bad)
	}
	return l
}

// switchDetails are the details' rows for the switch's side.
func switchDetails(th *theme, b *model.BondSample, s *model.SlaveSample) []line {
	if s.SwitchSide == nil {
		return nil
	}
	var out []line
	kv := func(k, v string) {
		if v != "" {
			out = append(out, line{{padRight(k, 22), th.dim}, {v, th.base}})
		}
	}
	out = append(out, nil, line{{"switch (LLDP/CDP)", th.heading}})
	if b != nil && b.NeighborsWhy != nil {
		out = append(out, line{{*b.NeighborsWhy, th.warn}})
	}
	if n := s.Neighbor; n == nil {
		out = append(out, line{{"nothing heard", th.dim}})
	} else {
		kv("protocol", n.Protocol+fmt.Sprintf("  ttl %d s, heard %.0f s ago", n.TTLSeconds, n.AgeSeconds))
		kv("chassis id", n.ChassisID+"  ("+n.ChassisIDSubtype+")")
		kv("system name", format.Deref(n.SystemName))
		kv("system description", format.Deref(n.SystemDescription))
		kv("platform", format.Deref(n.Platform))
		kv("port id", n.PortID+"  ("+n.PortIDSubtype+")")
		kv("port description", format.Deref(n.PortDescription))
		kv("management", strings.Join(n.ManagementAddresses, ", "))
		if n.PortVLANID != nil {
			kv("port vlan", strconv.Itoa(*n.PortVLANID))
		}
		var vlans []string
		for _, v := range n.VLANs {
			vlans = append(vlans, fmt.Sprintf("%d %s", v.ID, v.Name))
		}
		kv("vlans", strings.Join(vlans, ", "))
		if a := n.Aggregation; a != nil {
			agg := fmt.Sprintf("capable %v, enabled %v", a.Capable, a.Enabled)
			if a.PortID != nil {
				agg += fmt.Sprintf(", port %d", *a.PortID)
			}
			kv("link aggregation", agg)
		}
		if n.MaxFrameSize != nil {
			kv("max frame size", strconv.Itoa(*n.MaxFrameSize))
		}
		if a := n.Autoneg; a != nil {
			mau := ""
			if n.MAUType != nil {
				mau = ", " + neighbors.MAUName(*n.MAUType)
			}
			kv("autoneg", fmt.Sprintf("supported %v, enabled %v%s", a.Supported, a.Enabled, mau))
		}
		if why := neighborTrouble(b, s); why != "" {
			out = append(out, line{{"! " + why, th.bad}})
		}
	}
	if c := s.LACPDU; c != nil {
		age := "none seen yet"
		if c.LastRxAgeSeconds != nil {
			age = fmt.Sprintf("%.1f s ago", *c.LastRxAgeSeconds)
		}
		kv("LACPDU rx / tx", fmt.Sprintf("%d / %d  last rx %s", c.Rx, c.Tx, age))
		kv("LACPDU unknown/illegal", fmt.Sprintf("%d / %d", c.UnknownRx, c.IllegalRx))
		kv("marker rx / tx", fmt.Sprintf("%d / %d", c.MarkerRx, c.MarkerTx))
		if pv := c.PartnerView; pv != nil {
			kv("partner sees us as", fmt.Sprintf("%s key %d port %d", pv.SystemMAC, pv.Key, pv.Port))
		}
	}
	if c := s.Carrier; c != nil {
		kv("carrier up / down", fmt.Sprintf("%d / %d", c.Up, c.Down))
	}
	return out
}
