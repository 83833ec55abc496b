package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/format"
	"github.com/gdamore/tcell/v2"
)

// The render functions below turn the Model into lines for one panel at a
// given size. They only read.

// pack joins segments with two spaces, as many as fit in width, in order
// of importance.
func pack(width int, segments ...line) line {
	n := 0
	for _, s := range segments {
		n += len(s) + 1
	}
	out := make(line, 0, n)
	for _, s := range segments {
		if len(s) == 0 {
			continue
		}
		gap := 0
		if len(out) > 0 {
			gap = 2
		}
		if out.width()+gap+s.width() > width {
			continue // a shorter segment further on may still fit
		}
		if gap > 0 {
			out = append(out, span{"  ", &plainStyle})
		}
		out = append(out, s...)
	}
	return out
}

// renderHeader is the bond at a glance: two lines (one on a tiny screen).
func (d *dashboard) renderHeader(width, height int) []line {
	m, th := d.model, d.th
	b := m.Selected()
	name := line{{orText(m.Bond, "bondtop"), th.strong}}
	if n, i := len(m.Bonds()), d.bondIndex(); n > 1 && i >= 0 {
		name = name.add(fmt.Sprintf(" %d/%d", i+1, n), th.dim)
	}
	var status line
	switch since, gone := m.GoneSince(); {
	case m.SourceErr != nil:
		status = line{{"SAMPLING STOPPED: " + m.SourceErr.Error(), th.bad}}
	case gone:
		status = line{{"GONE since " + since.Format("15:04:05"), th.bad}}
	}
	var paused line
	if m.Paused {
		text := " PAUSED "
		if n := m.HeldEvents(); n > 0 {
			text = fmt.Sprintf(" PAUSED, %d events held ", n)
		}
		paused = line{{text, th.paused}}
	}
	var clock, every line
	if m.Snap != nil {
		clock = line{{m.Snap.Time.Format("15:04:05"), th.base}}
	}
	every = line{{"every ", th.dim}, {format.Duration(m.Interval), th.base}}
	if d.loadp.running() && d.overlayName != overlayLoad {
		// The panel is hidden: the test goes on, say so.
		paused = append(paused, d.loadBadge()...)
	}
	if m.Snap != nil && m.Snap.Behind > 0 {
		// Sampling cannot keep the pace asked for: say what it keeps.
		every = every.add(" BEHIND: every "+format.Duration(m.Snap.Behind), th.bad)
	}

	if b == nil {
		one := pack(width, name, status, paused, every, clock)
		if height < 2 {
			return []line{one}
		}
		return []line{one, nil}
	}

	var mode, hash, mii, lacp, agg, roles, speed line
	mode = line{{format.OrDash(b.Mode), th.base}}
	if b.IsOVS() {
		mode = ovsHeaderMode(&b.Bond, th)
	}
	if b.XmitHashPolicy != nil && usesHashPolicy(format.Deref(b.Mode)) {
		hash = line{{"hash ", th.dim}, {*b.XmitHashPolicy, th.base}}
	}
	miiStyle := th.good
	if format.Deref(b.MIIStatus) != "up" {
		miiStyle = th.bad
	}
	mii = line{{"mii ", th.dim}, {format.OrDash(b.MIIStatus), miiStyle}}
	if l := b.LACP; b.Is8023AD() && l != nil {
		lacp = line{{"lacp ", th.dim}, {format.OrDash(l.Rate), th.base}}
		if l.ADSelect != nil {
			lacp = lacp.add(" ad_select ", th.dim).add(*l.ADSelect, th.base)
		}
		switch {
		case l.NoActiveAggregator:
			agg = line{{"NO ACTIVE AGGREGATOR", th.bad}}
		case l.AggregatorID != nil:
			agg = line{{"agg ", th.dim}, {strconv.Itoa(*l.AggregatorID), th.base}}
			if l.NumPorts != nil {
				agg = agg.add(fmt.Sprintf(" (%d ports)", *l.NumPorts), th.base)
			}
		}
	}
	if b.ActiveSlave != nil || b.Primary != nil {
		if b.ActiveSlave != nil {
			roles = line{{"active ", th.dim}, {*b.ActiveSlave, th.strong}}
		}
		if b.Primary != nil {
			roles = append(roles, span{" primary ", th.dim}, span{*b.Primary, th.base})
		}
	}
	if mbps := linkCapacity(b); mbps > 0 {
		speed = line{{units.Speed(mbps), th.base}}
	}
	rates := line{{"rx ", th.dim}, {format.Long(b.RxBps), th.strong}, {"  tx ", th.dim}, {format.Long(b.TxBps), th.strong}}
	fs := findings(b)
	warnings := len(fs) + len(m.Snap.Warnings)
	var warn line
	switch {
	case warnings == 0:
		warn = line{{"no warnings", th.good}}
	case warnings == 1:
		warn = line{{"1 warning", th.bad}}
	default:
		warn = line{{strconv.Itoa(warnings) + " warnings", th.bad}}
	}

	if height < 2 {
		// One line: what moves and whether anything is wrong, in short.
		short := line{{"rx ", th.dim}, {format.Short(b.RxBps), th.strong}, {" tx ", th.dim}, {format.Short(b.TxBps), th.strong}}
		if warnings > 0 {
			warn = line{{"!" + strconv.Itoa(warnings), th.bad}}
		}
		return []line{pack(width, name, status, paused, short, warn, clock, mode)}
	}
	var meter line
	if text := meterStatus(b); text != "" {
		meter = line{{text, th.dim}}
	}
	return []line{
		pack(width, name, mode, hash, mii, roles, lacp, agg, speed),
		pack(width, status, paused, rates, every, clock, dataAge(b, th), warn, meter),
	}
}

// staleAfter is the data age the header calls stale: an exporter samples
// at every scrape, and scrapes seldom lie a minute apart.
const staleAfter = time.Minute

// dataAge says how old a relayed bond's data is (the fleet view: the
// time since its exporter sampled); nothing for a bond read here.
func dataAge(b *model.BondSample, th *theme) line {
	if b.DataAgeSeconds == nil {
		return nil
	}
	age := time.Duration(*b.DataAgeSeconds * float64(time.Second)).Round(time.Second)
	if age > staleAfter {
		return line{{"STALE: data " + age.String() + " old", th.bad}}
	}
	return line{{"data ", th.dim}, {age.String() + " old", th.base}}
}

// usesHashPolicy reports the modes whose slave choice xmit_hash_policy
// decides; the others ignore it, so the header leaves it out.
func usesHashPolicy(mode string) bool {
	switch mode {
	case bonding.Mode8023AD, bonding.ModeXOR, bonding.ModeTLB, bonding.ModeALB:
		return true
	}
	return false
}

// linkCapacity is what the bond can carry in Mbit/s: the active slave's
// speed in active-backup, the active aggregator's in 802.3ad, the slowest
// slave's in broadcast (every frame goes everywhere), else the up slaves'
// sum. 0 when unknown.
func linkCapacity(b *model.BondSample) int {
	speed := func(s *model.SlaveSample) int {
		if s.SpeedMbps == nil || *s.SpeedMbps < 0 || format.Deref(s.MIIStatus) != "up" {
			return 0
		}
		return *s.SpeedMbps
	}
	mode := format.Deref(b.Mode)
	total, slowest := 0, 0
	for i := range b.Slaves {
		s := &b.Slaves[i]
		switch {
		case mode == bonding.ModeActiveBackup:
			if s.Name == format.Deref(b.ActiveSlave) {
				return speed(s)
			}
			continue
		case mode == bonding.Mode8023AD && b.LACP != nil && b.LACP.AggregatorID != nil && s.AggregatorID != nil:
			if *s.AggregatorID != *b.LACP.AggregatorID {
				continue
			}
		}
		v := speed(s)
		total += v
		if v > 0 && (slowest == 0 || v < slowest) {
			slowest = v
		}
	}
	if mode == bonding.ModeBroadcast {
		return slowest
	}
	return total
}

// keyHint is a key and what it does, for the footer and the help.
type keyHint struct{ key, what string }

// renderFooter shows the keys, the most needed first, as many as fit.
func (d *dashboard) renderFooter(width, _ int) []line {
	m, th := d.model, d.th
	// The hints change with a key press, not with a snapshot: made again
	// only when what they show changed.
	key := footerKey{width: width, paused: m.Paused, many: len(m.Bonds()) > 1,
		interval: m.Interval, window: m.Window, sort: m.Sort}
	if d.footerLines != nil && d.footerKey == key {
		return d.footerLines
	}
	d.footerKey = key
	pause := "pause"
	if m.Paused {
		pause = "resume"
	}
	hints := []keyHint{
		{"q", "quit"}, {"?", "help"}, {"Tab", "focus"}, {"Enter", "details"},
	}
	if key.many {
		hints = append(hints, keyHint{"b [ ]", "bond"})
	}
	hints = append(hints,
		keyHint{"p", pause},
		keyHint{"+-", format.Duration(m.Interval)},
		keyHint{"g", format.Duration(m.Window)},
		keyHint{"s", "sort " + m.Sort.String()},
		keyHint{"l", "load"},
		keyHint{"d", "diagnose"},
	)
	var out line
	for _, h := range hints {
		item := line{{h.key, th.key}, {" " + h.what + " ", th.base}}
		if out.width()+item.width() > width {
			break
		}
		out = append(out, item...)
	}
	d.footerLines = []line{out}
	return d.footerLines
}

// footerKey is what the footer's hints depend on.
type footerKey struct {
	width            int
	paused, many     bool
	interval, window time.Duration
	sort             SortOrder
}

// renderSide is the right-hand panel: what needs attention first, then
// LACP in 802.3ad (our system, the partner each slave hears), or the
// failover settings in the other modes.
func (d *dashboard) renderSide(width, _ int) []line {
	m, th := d.model, d.th
	b := m.Selected()
	if b == nil {
		return nil
	}
	var out []line
	// Findings wrap: they are what this panel is for, and a cut sentence
	// hides the advice at its end.
	for _, f := range findings(b) {
		st := th.warn
		if f.sev == sevBad {
			st = th.bad
		}
		for _, text := range wrap("! "+f.text, width, "  ") {
			out = append(out, line{{text, st}})
		}
	}
	for _, w := range m.Snap.Warnings {
		for _, text := range wrap("! "+w, width, "  ") {
			out = append(out, line{{text, th.warn}})
		}
	}
	if len(out) == 0 {
		out = append(out, line{{"✓ nothing to report", th.good}})
	}
	if b.Is8023AD() {
		out = append(out, d.lacpLines(b, width)...)
	} else {
		out = append(out, d.failoverLines(b)...)
	}
	for _, n := range m.Snap.Notes {
		out = append(out, line{{n, th.dim}})
	}
	return out
}

func (d *dashboard) lacpLines(b *model.BondSample, width int) []line {
	th := d.th
	l := b.LACP
	if l == nil {
		return []line{{{"no LACP details", th.dim}}}
	}
	// Sized for what a row holds, so that it is built in one allocation:
	// growing a row of ten spans by doubling made four, a third of a
	// frame's garbage at 100 ms (BenchmarkTerminalFrame's allocations).
	out := make([]line, 0, 2+len(b.Slaves))
	var key, prio, passive line
	if l.ActorKey != nil {
		key = line{{"key ", th.dim}, {strconv.Itoa(*l.ActorKey), th.base}}
	}
	if l.SystemPriority != nil {
		prio = line{{"prio ", th.dim}, {strconv.Itoa(*l.SystemPriority), th.base}}
	}
	if l.Active != nil && !*l.Active {
		passive = line{{"passive", th.warn}}
	}
	out = append(out, pack(width, line{{"we ", th.dim}, {format.OrDash(l.SystemMAC), th.base}}, key, passive, prio))
	partner := expectedPartner(b)
	pl := append(make(line, 0, 4), span{"partner ", th.dim})
	if partner == "" {
		pl = pl.add("none heard", th.bad)
	} else {
		pl = pl.add(partner, th.base)
	}
	if l.PartnerKey != nil {
		pl = pl.add(" key ", th.dim).add(strconv.Itoa(*l.PartnerKey), th.base)
	}
	out = append(out, pl)
	nameWidth := 0
	for i := range b.Slaves {
		nameWidth = max(nameWidth, len(b.Slaves[i].Name))
	}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		row := append(make(line, 0, 16), span{padRight(s.Name, nameWidth+1), th.slave(i)})
		p := s.Partner
		if p == nil {
			out = append(out, row.add("no partner details", th.dim))
			continue
		}
		mac := format.OrDash(p.SystemMAC)
		macStyle := th.base
		if mac == zeroMAC || (partner != "" && mac != "-" && mac != partner) {
			macStyle = th.bad
		}
		row = row.add(mac, macStyle)
		keyStyle := th.base
		if l.PartnerKey != nil && p.Key != nil && *p.Key != *l.PartnerKey {
			keyStyle = th.bad
		}
		row = row.add(" key ", th.dim).add(format.Int(p.Key), keyStyle)
		row = row.add(" port ", th.dim).add(format.Int(p.PortNumber), th.base)
		beside := neighborBeside(th, b, s)
		if width-row.width()-beside.width() >= 11 && p.SystemPriority != nil {
			row = row.add(" prio ", th.dim).add(strconv.Itoa(*p.SystemPriority), th.base)
		}
		churn := format.Deref(s.ActorChurnState) == "churned" || format.Deref(s.PartnerChurnState) == "churned"
		if churn {
			row = row.add(" churned", th.bad)
		}
		out = append(out, append(row, beside...))
	}
	return out
}

func (d *dashboard) failoverLines(b *model.BondSample) []line {
	th := d.th
	var out []line
	kv := func(pairs ...string) line {
		var l line
		for i := 0; i+1 < len(pairs); i += 2 {
			if pairs[i+1] == "" {
				continue
			}
			if len(l) > 0 {
				l = l.add("  ", th.base)
			}
			l = l.add(pairs[i]+" ", th.dim).add(pairs[i+1], th.base)
		}
		return l
	}
	out = append(out, kv("active", format.OrDash(b.ActiveSlave), "primary", format.Deref(b.Primary), "reselect", format.Deref(b.PrimaryReselect)))
	out = append(out, kv("fail_over_mac", format.Deref(b.FailOverMAC), "miimon", msOrEmpty(b.MIIMonMs),
		"updelay", msOrEmpty(b.UpDelayMs), "downdelay", msOrEmpty(b.DownDelayMs)))
	if b.ARPIntervalMs != nil && *b.ARPIntervalMs > 0 {
		out = append(out, kv("arp_interval", msOrEmpty(b.ARPIntervalMs), "targets", strings.Join(b.ARPTargets, ",")))
	}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		st := th.base
		if format.Deref(s.MIIStatus) != "up" {
			st = th.bad
		}
		l := line{{s.Name + " ", th.slave(i)}, {format.OrDash(s.MIIStatus), st}}
		if s.State != nil {
			l = l.add(" "+*s.State, th.base)
		}
		l = l.add(" failures ", th.dim).add(format.Int(s.LinkFailureCount), th.base)
		if s.PermHWAddr != nil {
			l = l.add(" perm ", th.dim).add(*s.PermHWAddr, th.base)
		}
		out = append(out, l)
	}
	return out
}

func msOrEmpty(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p) + "ms"
}

// renderEvents is the log, newest first; other bonds' events are dimmed.
func (d *dashboard) renderEvents(width, _ int) []line {
	m, th := d.model, d.th
	if len(m.Events) == 0 {
		return []line{{{"no events yet (link, failover, LACP changes)", th.dim}}}
	}
	const stamp = "15:04:05 "
	out := make([]line, 0, len(m.Events))
	for _, e := range m.Events {
		st := eventStyle(th, e.Kind)
		if e.Bond != m.Bond {
			st = th.dim
		}
		for i, text := range wrap(e.Message, width-len(stamp), "") {
			prefix := e.Time.Format(stamp)
			if i > 0 {
				prefix = padRight("", len(stamp))
			}
			out = append(out, line{{prefix, th.dim}, {text, st}})
		}
	}
	return out
}

func eventStyle(th *theme, k model.EventKind) *tcell.Style {
	switch k {
	case model.EventLinkDown, model.EventBondGone, model.EventChurn,
		model.EventSlaveRemoved, model.EventLinkFailure:
		return th.bad
	case model.EventLinkUp, model.EventBondAppeared, model.EventSlaveAdded:
		return th.good
	case model.EventFailover, model.EventAggregator, model.EventPartnerMAC, model.EventBondMIIChanged:
		return th.warn
	}
	return th.base
}

// renderDetails is everything known about the selected slave.
func (d *dashboard) renderDetails(_, _ int) []line {
	th := d.th
	s := d.table.selectedSlave()
	if s == nil {
		return []line{{{"no slave selected", th.dim}}}
	}
	b := d.model.Selected()
	var out []line
	kv := func(k, v string) {
		if v == "-" {
			return // not known for this slave: a row of dashes only adds noise
		}
		out = append(out, line{{padRight(k, 22), th.dim}, {v, th.base}})
	}
	head := func(text string) {
		out = append(out, nil, line{{text, th.heading}})
	}
	kv("slave", s.Name)
	kv("mii status", format.OrDash(s.MIIStatus))
	kv("state", format.OrDash(s.State))
	kv("operstate", format.OrDash(s.OperState))
	kv("speed / duplex", format.SpeedDuplex(&s.Slave))
	kv("mtu", format.Int(s.MTU))
	kv("link failures", format.Int(s.LinkFailureCount))
	kv("permanent hw addr", format.OrDash(s.PermHWAddr))
	kv("queue id", format.Int(s.QueueID))
	head("traffic in the interval")
	kv("rx", format.Long(s.RxBps)+"  "+format.Packets(s.RxPps)+"  share "+format.Percent(s.ShareRx))
	kv("tx", format.Long(s.TxBps)+"  "+format.Packets(s.TxPps)+"  share "+format.Percent(s.ShareTx))
	errs, _ := format.Errors(s.Interval)
	kv("errors/drops/overruns", errs)
	kv("rx bytes total", format.Uint(s.RxBytes))
	kv("tx bytes total", format.Uint(s.TxBytes))
	if b != nil && b.Is8023AD() {
		head("LACP")
		kv("aggregator id", format.Int(s.AggregatorID))
		kv("churn actor / partner", format.OrDash(s.ActorChurnState)+" / "+format.OrDash(s.PartnerChurnState)+
			"  (counts "+format.Int(s.ActorChurnedCount)+" / "+format.Int(s.PartnerChurnedCount)+")")
		port := func(who string, p *bonding.Port) {
			if p == nil {
				kv(who, "-")
				return
			}
			kv(who+" system", format.OrDash(p.SystemMAC)+"  prio "+format.Int(p.SystemPriority))
			kv(who+" key / port", format.Int(p.Key)+" / "+format.Int(p.PortNumber)+"  prio "+format.Int(p.PortPriority))
			state := "-"
			var flags line
			if p.PortState != nil {
				state = strconv.Itoa(int(*p.PortState)) + " " + p.PortState.String()
				flags = portFlags(p.PortState, th)
			}
			out = append(out, append(line{{padRight(who+" state", 22), th.dim}}, append(flags, span{"  " + state, th.base})...))
		}
		if s.Actor != nil {
			port("actor", &s.Actor.Port)
		} else {
			port("actor", nil)
		}
		if s.Partner != nil {
			port("partner", &s.Partner.Port)
		} else {
			port("partner", nil)
		}
	}
	out = append(out, switchDetails(th, b, s)...)
	out = append(out, physicalDetails(th, s)...)
	out = append(out, ovsMemberDetails(&s.Slave, th)...)
	if b != nil {
		var mine []finding
		for _, f := range findings(b) {
			if f.slave == s.Name {
				mine = append(mine, f)
			}
		}
		if len(mine) > 0 {
			head("needs attention")
			for _, f := range mine {
				out = append(out, line{{"! " + f.text, th.bad}})
			}
		}
		out = append(out, d.topTalkers(b, s.Name)...)
	}
	out = append(out, nil, line{{"Esc closes", th.dim}})
	return out
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// helpKeys is the key map as the help overlay lists it.
var helpKeys = []keyHint{
	{"q, F10, Ctrl-C", "quit"},
	{"Ctrl-L", "redraw the whole screen"},
	{"?, F1", "this help (Esc closes any panel)"},
	{"Tab, Shift-Tab", "move focus: slaves, LACP, events"},
	{"↑ ↓ PgUp PgDn", "move in the focused panel (j k too)"},
	{"Enter", "details of the selected slave"},
	{"[ ]  1-9", "previous / next bond, or bond number N"},
	{"b", "bond list: mode, slaves up, rates, worst finding (/ filters)"},
	{"p", "pause / resume (events keep being collected)"},
	{"+ -", "sample less / more often (100ms .. 10s)"},
	{"g", "graph window: 1m, 5m, 1h"},
	{"s, F6", "sort slaves: enslave order, rx, tx, errors, name"},
	{"l", "load panel: test streams over the bond"},
	{"d, f", "diagnosis, flows per slave"},
	{"in flows", "s sort, ← → one slave, t tx/rx (with a flow meter)"},
}

func (d *dashboard) renderHelp(_, _ int) []line {
	th := d.th
	out := []line{{{"bondtop: top for Linux bonding", th.strong}}, nil}
	keys := helpKeys
	if d.model.Playback {
		keys = append(slices.Clone(keys), keyHint{"< >", "replay: 10 s back / forward (p pauses the playback)"})
	}
	for _, k := range keys {
		out = append(out, line{{padRight(k.key, 16), th.strong}, {k.what, th.base}})
	}
	out = append(out, nil,
		line{{"LACP port state flags (ACTOR, PARTNER columns)", th.heading}},
		line{{"A", th.strong}, {" activity   ", th.base}, {"T", th.strong}, {" short timeout  ", th.base}, {"G", th.strong}, {" aggregation", th.base}},
		line{{"S", th.strong}, {" sync       ", th.base}, {"C", th.strong}, {" collecting     ", th.base}, {"D", th.strong}, {" distributing", th.base}},
		line{{"F", th.strong}, {" defaulted  ", th.base}, {"E", th.strong}, {" expired", th.base}},
		line{{"-", th.bad}, {" a bit a healthy port needs is missing; ", th.base}, {"F", th.bad}, {" ", th.base}, {"E", th.bad}, {" set is trouble", th.base}},
		nil,
		line{{"AGG n*", th.bad}, {"  slave outside the active aggregator: it carries nothing", th.base}},
		line{{"E/D/O", th.strong}, {"   errors / drops / overruns in the last interval", th.base}},
		line{{"bars", th.strong}, {"    rate against the slave's link speed", th.base}},
		line{{"graphs", th.strong}, {"  peak per column; a gap is an unknown rate", th.base}},
	)
	return out
}

// windowStart is where the graphs begin for the snapshot on screen.
func windowStart(to time.Time, window time.Duration) time.Time { return to.Add(-window) }
