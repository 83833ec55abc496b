package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/format"
	"github.com/gdamore/tcell/v2"
)

// The flows view (key f): this host's sockets that cross the selected
// bond, each with the slave the kernel's transmit hash sends it on, under
// a per-slave summary of predicted against measured tx. Where those two
// disagree, traffic the host did not originate crosses the bond (or the
// hash is not the predicted one): the number an admin needs before
// blaming the switch.

// flowSort is the column the flows are ordered by.
type flowSort int

// The orders s cycles through: the heaviest flows first by default, since
// the question is usually "what fills that slave?".
const (
	flowByTx flowSort = iota
	flowByRx
	flowBySlave
	flowByRemote
	flowByLocal
	flowByState
	numFlowSorts
)

func (s flowSort) String() string {
	return [...]string{"tx", "rx", "slave", "remote", "local", "state"}[s]
}

// flowsState is the view's own state.
type flowsState struct {
	sort flowSort
	// slave shows only the flows predicted on it (measured on it, with a
	// flow meter); "" shows all.
	slave string
	// measuredSort and dir order and filter the meter's flows.
	measuredSort measuredSort
	dir          dirFilter
}

// flowsKey: s sorts, ← → cycle the slave filter; the rest scrolls.
func (d *dashboard) flowsKey(ev *tcell.EventKey) bool {
	b := d.model.Selected()
	measured := b != nil && b.Measured.Metered()
	switch {
	case ev.Key() == tcell.KeyRune && ev.Rune() == 's' && measured:
		d.flows.measuredSort = (d.flows.measuredSort + 1) % numMeasuredSorts
	case ev.Key() == tcell.KeyRune && ev.Rune() == 't' && measured:
		d.flows.dir = (d.flows.dir + 1) % 3
	case ev.Key() == tcell.KeyRune && ev.Rune() == 's':
		d.flows.sort = (d.flows.sort + 1) % numFlowSorts
	case ev.Key() == tcell.KeyRight || ev.Key() == tcell.KeyLeft:
		if b == nil {
			return true
		}
		choices := []string{""}
		for i := range b.Slaves {
			choices = append(choices, b.Slaves[i].Name)
		}
		step := 1
		if ev.Key() == tcell.KeyLeft {
			step = -1
		}
		i := max(slices.Index(choices, d.flows.slave), 0)
		d.flows.slave = choices[((i+step)%len(choices)+len(choices))%len(choices)]
	default:
		return false
	}
	d.overlay.offset = 0
	return true
}

// flowSlave is what the slave column says for a flow: the slave, or why
// there is none.
func flowSlave(c *bonding.Choice) string {
	switch c.Outcome {
	case bonding.Hashed, bonding.Active:
		return c.Slave
	case bonding.EverySlave:
		return "all"
	case bonding.Dropped:
		return "none"
	}
	return "-"
}

// sortedFlows are the table's flows after the filter, in the chosen order;
// ties keep the kernel's dump order so rows do not jump between draws.
func (d *dashboard) sortedFlows(t *model.FlowTable) []*model.Flow {
	out := make([]*model.Flow, 0, len(t.Flows))
	for i := range t.Flows {
		f := &t.Flows[i]
		if d.flows.slave != "" && f.Choice.Slave != d.flows.slave && f.Choice.Outcome != bonding.EverySlave {
			continue
		}
		out = append(out, f)
	}
	weight := func(f *model.Flow, tx bool) float64 {
		switch {
		case f.HaveRate && tx:
			return f.TxBps
		case f.HaveRate:
			return f.RxBps
		case f.HaveBytes && tx:
			return float64(f.TxBytes)
		case f.HaveBytes:
			return float64(f.RxBytes)
		}
		return -1
	}
	slices.SortStableFunc(out, func(a, b *model.Flow) int {
		switch d.flows.sort {
		case flowByTx:
			return cmp.Compare(weight(b, true), weight(a, true))
		case flowByRx:
			return cmp.Compare(weight(b, false), weight(a, false))
		case flowBySlave:
			return cmp.Compare(flowSlave(&a.Choice), flowSlave(&b.Choice))
		case flowByRemote:
			return a.Remote.Compare(b.Remote)
		case flowByLocal:
			return a.Local.Compare(b.Local)
		case flowByState:
			return cmp.Compare(a.State, b.State)
		}
		return 0
	})
	return out
}

func protoName(p uint8) string {
	switch p {
	case bonding.ProtoTCP:
		return "tcp"
	case bonding.ProtoUDP:
		return "udp"
	}
	return strconv.Itoa(int(p))
}

func (d *dashboard) renderFlows(width, _ int) []line {
	th := d.th
	b := d.model.Selected()
	if b == nil {
		return []line{{{"no bond selected", th.dim}}}
	}
	if b.Measured.Metered() {
		return d.renderMeasured(b, width)
	}
	t := b.Flows
	if t == nil {
		return []line{
			{{b.Name + ": no flow table", th.strong}},
			nil,
			{{"The flow table lists this host's TCP and UDP sockets (netlink sock_diag) and", th.base}},
			{{"the slave each one hashes to. It is read on the live host and simulated by", th.base}},
			{{"--demo; a --root tree or a --replay recording holds counters, not sockets.", th.base}},
			nil,
			{{"Esc closes", th.dim}},
		}
	}
	filter := "all slaves"
	if d.flows.slave != "" {
		filter = d.flows.slave
	}
	rates := t.HaveRates()
	unit := "bytes"
	if rates {
		unit = "bit/s"
	}
	out := []line{
		{{fmt.Sprintf("%s: %d flows", b.Name, len(t.Flows)), th.strong},
			{fmt.Sprintf("  sort %s (s)  slave %s (← →)  %s  Esc close", d.flows.sort, filter, unit), th.dim}},
	}
	if m := b.Measured; m != nil && m.Why != "" {
		for _, text := range wrap("Only this host's sockets: "+m.Why+".", width, "  ") {
			out = append(out, line{{text, th.dim}})
		}
	}
	if t.Err != "" {
		out = append(out, line{{"no slave predicted: " + t.Err, th.warn}})
	}
	if t.Unpredictable > 0 {
		for _, text := range wrap(fmt.Sprintf("%d flows cannot be placed: %s", t.Unpredictable, t.Reason), width, "  ") {
			out = append(out, line{{text, th.warn}})
		}
	}
	// Per slave: what the hash sends there against what the counters saw.
	nameW := 6
	for i := range b.Slaves {
		nameW = max(nameW, len(b.Slaves[i].Name))
	}
	out = append(out, line{{padRight("slave", nameW+1) + padLeft("flows", 6) + padLeft("predicted tx", 14) + padLeft("measured tx", 13), th.heading}})
	for i := range b.Slaves {
		s := &b.Slaves[i]
		sf := t.Slave(s.Name)
		if sf == nil {
			continue
		}
		pred := "-"
		if rates {
			pred = units.Short(sf.TxBps)
		}
		st := th.slave(i)
		if d.flows.slave == s.Name {
			st = styleOf(st.Reverse(true))
		}
		row := line{{padRight(s.Name, nameW+1), st}, {padLeft(strconv.Itoa(sf.Flows), 6) + padLeft(pred, 14) + padLeft(format.Short(s.TxBps), 13), th.base}}
		if rates && s.TxBps != nil && *s.TxBps > 1.2*sf.TxBps+1e6 {
			row = row.add("  "+units.Short(*s.TxBps-sf.TxBps)+" from elsewhere", th.dim)
		}
		out = append(out, row)
	}
	out = append(out, nil)

	// The table: local address and port on wide screens, the port alone
	// otherwise (every local address is this host's, usually the same).
	wide := width >= 110
	localW, remoteW := 7, 24
	if wide {
		localW, remoteW = 28, 28
	}
	slaveW := max(nameW+1, 7)
	hdr := padRight("local", localW) + padRight("remote", remoteW) + padRight("proto", 6) + padRight("state", 12) + padRight("slave", slaveW) + padLeft("tx", 8) + padLeft("rx", 8)
	out = append(out, line{{truncate(hdr, width), th.heading}})
	index := map[string]int{}
	for i := range b.Slaves {
		index[b.Slaves[i].Name] = i
	}
	flows := d.sortedFlows(t)
	if len(flows) == 0 {
		msg := "no TCP or UDP socket of this host crosses " + b.Name
		if d.flows.slave != "" {
			msg = "no flow is predicted on " + d.flows.slave
		}
		out = append(out, line{{msg, th.dim}})
	}
	for _, f := range flows {
		local := ":" + strconv.Itoa(int(f.Local.Port()))
		if wide {
			local = f.Local.String()
		}
		var tx, rx string
		switch {
		case rates && f.HaveRate:
			tx, rx = units.Short(f.TxBps), units.Short(f.RxBps)
		case f.HaveBytes:
			tx, rx = units.Short(float64(f.TxBytes)), units.Short(float64(f.RxBytes))
		default:
			tx, rx = "-", "-"
		}
		slave := flowSlave(&f.Choice)
		st := th.dim
		if i, ok := index[f.Choice.Slave]; ok {
			st = th.slave(i)
		}
		row := line{
			{padRight(truncate(local, localW-1), localW) + padRight(truncate(f.Remote.String(), remoteW-1), remoteW) +
				padRight(protoName(f.Proto), 6) + padRight(truncate(f.State, 11), 12), th.base},
			{padRight(slave, slaveW), st},
			{padLeft(tx, 8) + padLeft(rx, 8), th.base},
		}
		if slave == "-" && f.Choice.Reason != "" && width-row.width() > 10 {
			row = row.add("  "+truncate(f.Choice.Reason, width-row.width()-2), th.dim)
		}
		out = append(out, row)
	}
	return out
}
