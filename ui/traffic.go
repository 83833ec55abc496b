package ui

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/format"
)

// The flows view over the flow meter's traffic: every flow on the bond's
// slaves, this host's sockets and forwarded, bridged and VM traffic
// alike, with the slave it really took (tx) or arrived on (rx), the slave
// the hash predicts (tx), and a mark where the two differ. Above the
// table, per slave: what the flows add up to in each direction next to
// the slave's own counters, and what the meter counted in no flow.

// maxFlowRows bounds the rows drawn: a host may carry 100k flows, and
// the busiest are the ones that matter (filter by slave to see others).
const maxFlowRows = 500

// measuredSort is the order of the measured flows.
type measuredSort int

const (
	measuredByRate measuredSort = iota
	measuredByBytes
	measuredBySlave
	measuredBySource
	measuredByDest
	numMeasuredSorts
)

func (s measuredSort) String() string {
	return [...]string{"rate", "bytes", "slave", "source", "destination"}[s]
}

// dirFilter shows both directions, or one.
type dirFilter int

const (
	dirBoth dirFilter = iota
	dirTx
	dirRx
)

func (f dirFilter) String() string { return [...]string{"tx+rx", "tx", "rx"}[f] }

func (f dirFilter) keeps(d flowmeter.Direction) bool {
	return f == dirBoth || (f == dirTx) == (d == flowmeter.Tx)
}

// measuredFlows are m's flows after the slave and direction filters, in
// the chosen order (the traffic comes ranked by rate: that order needs no
// sort, and ties keep it).
func (d *dashboard) measuredFlows(m *model.MeasuredTraffic) []*model.MeasuredFlow {
	out := make([]*model.MeasuredFlow, 0, min(len(m.Flows), 4*maxFlowRows))
	for i := range m.Flows {
		f := &m.Flows[i]
		if d.flows.slave != "" && f.Slave != d.flows.slave || !d.flows.dir.keeps(f.Direction) {
			continue
		}
		out = append(out, f)
	}
	switch d.flows.measuredSort {
	case measuredByBytes:
		slices.SortStableFunc(out, func(a, b *model.MeasuredFlow) int { return cmp.Compare(b.Bytes, a.Bytes) })
	case measuredBySlave:
		slices.SortStableFunc(out, func(a, b *model.MeasuredFlow) int { return cmp.Compare(a.Slave, b.Slave) })
	case measuredBySource:
		slices.SortStableFunc(out, func(a, b *model.MeasuredFlow) int { return a.Src.Compare(b.Src) })
	case measuredByDest:
		slices.SortStableFunc(out, func(a, b *model.MeasuredFlow) int { return a.Dst.Compare(b.Dst) })
	}
	return out
}

// endpoint is an address and port as ss prints them; the MAC for frames
// that are not IP.
func endpoint(a netip.Addr, port uint16, mac [6]byte) string {
	switch {
	case !a.IsValid():
		return macText(mac)
	case port == 0:
		return a.String()
	}
	return netip.AddrPortFrom(a, port).String()
}

func macText(m [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// meterSource names the source for the view's title: "ebpf", "ebpf
// 1:20 over budget (~ estimates)" or "sampled 1:100 (estimates)".
func meterSource(m *model.MeasuredTraffic) string {
	switch {
	case m.Source == string(flowmeter.SourceSampled):
		return fmt.Sprintf("sampled 1:%d (estimates)", m.SampleRate)
	case m.SampleRate > 1:
		return fmt.Sprintf("%s 1:%d over budget (~ estimates)", m.Source, m.SampleRate)
	}
	return m.Source
}

// agreementText is the live hash check in one line: "hash check 23/23 tx
// flows on the predicted slave (100% of bytes)".
func agreementText(m *model.MeasuredTraffic) (string, bool) {
	a := m.Agreement
	predictable := a.Flows - a.Unpredictable
	if predictable <= 0 {
		if a.Flows > 0 {
			return fmt.Sprintf("hash check: none of %d tx flows is predictable in this mode", a.Flows), true
		}
		return "hash check: no tx flow moved", true
	}
	text := fmt.Sprintf("hash check: %d/%d tx flows on the predicted slave", a.Agree, predictable)
	if a.BytesAgreeShare != nil {
		text += fmt.Sprintf(" (%.0f%% of bytes)", *a.BytesAgreeShare*100)
	}
	if a.Unpredictable > 0 {
		text += fmt.Sprintf(", %d unpredictable", a.Unpredictable)
	}
	return text, a.Agree == predictable
}

func (d *dashboard) renderMeasured(b *model.BondSample, width int) []line {
	th := d.th
	m := b.Measured
	filter := "all slaves"
	if d.flows.slave != "" {
		filter = d.flows.slave
	}
	out := []line{
		{{fmt.Sprintf("%s: %d flows, %s", b.Name, len(m.Flows), meterSource(m)), th.strong},
			{fmt.Sprintf("  sort %s (s)  slave %s (← →)  %s (t)  Esc close", d.flows.measuredSort, filter, d.flows.dir), th.dim}},
	}
	if hint := meterPaceHint(m.Seconds, d.model.Interval); hint != "" {
		// The rest of the screen moves faster; say why this table does not.
		out[0] = append(out[0], span{hint, th.dim})
	}
	text, ok := agreementText(m)
	st := th.good
	if !ok {
		st = th.warn
	}
	out = append(out, line{{text, st}})
	if lost := m.LostBytes(); lost > 0 {
		out = append(out, line{{fmt.Sprintf("the flow map is full (%d/%d): %s bytes counted in no flow (\"other\" below); --flow-map-size raises the limit",
			m.MapEntries, m.MapSize, strconv.FormatUint(lost, 10)), th.warn}})
	}

	// Per slave: the flows' sums against the counters, both directions.
	nameW := 6
	for i := range b.Slaves {
		nameW = max(nameW, len(b.Slaves[i].Name))
	}
	out = append(out, line{{padRight("slave", nameW+1) + padLeft("tx flows", 9) + padLeft("tx", 8) + padLeft("counted", 9) +
		padLeft("rx flows", 10) + padLeft("rx", 8) + padLeft("counted", 9) + padLeft("other", 8), th.heading}})
	for i := range b.Slaves {
		s := &b.Slaves[i]
		ms := m.Slave(s.Name)
		if ms == nil {
			continue
		}
		st := th.slave(i)
		if d.flows.slave == s.Name {
			st = styleOf(st.Reverse(true))
		}
		other := "-"
		if ms.LostTxBps+ms.LostRxBps > 0 {
			other = units.Short(ms.LostTxBps + ms.LostRxBps)
		}
		out = append(out, line{{padRight(s.Name, nameW+1), st}, {padLeft(strconv.Itoa(ms.TxFlows), 9) + padLeft(units.Short(ms.TxBps), 8) + padLeft(format.Short(s.TxBps), 9) +
			padLeft(strconv.Itoa(ms.RxFlows), 10) + padLeft(units.Short(ms.RxBps), 8) + padLeft(format.Short(s.RxBps), 9) + padLeft(other, 8), th.base}})
	}
	out = append(out, nil)
	return append(out, d.flowRows.rows(d, b, width, nameW, filter)...)
}

// flowRowsMemo keeps the rows of the meter's flow table while what they
// show is the same reading, filter, order and width. The dashboard reads
// the meter once a second (collector.DashboardMeterEvery), and the rows,
// a padded line for each of up to maxFlowRows flows, were built again on
// each of the nine frames in between at 100 ms.
type flowRowsMemo struct {
	m      *model.MeasuredTraffic
	state  flowsState
	width  int
	th     *theme
	slaves []string // the bond's slaves, in order: their colours
	out    []line
}

// rows are the flow table's heading and rows for b's traffic.
func (memo *flowRowsMemo) rows(d *dashboard, b *model.BondSample, width, nameW int, filter string) []line {
	m := b.Measured
	if memo.out != nil && memo.m == m && memo.state == d.flows && memo.width == width && memo.th == d.th &&
		slices.EqualFunc(memo.slaves, b.Slaves, func(name string, s model.SlaveSample) bool { return name == s.Name }) {
		return memo.out
	}
	memo.m, memo.state, memo.width, memo.th = m, d.flows, width, d.th
	memo.slaves = memo.slaves[:0]
	for i := range b.Slaves {
		memo.slaves = append(memo.slaves, b.Slaves[i].Name)
	}
	memo.out = d.measuredRows(b, width, nameW, filter)
	return memo.out
}

// measuredRows builds the flow table's heading and rows.
func (d *dashboard) measuredRows(b *model.BondSample, width, nameW int, filter string) []line {
	th := d.th
	m := b.Measured
	var out []line
	// The table. Addresses get the room; the source and destination are
	// the frame's (a received flow's source is the far end).
	slaveW := max(nameW+1, 7)
	addrW := max(15, (width-slaveW-4-6-8-slaveW-8)/2)
	hdr := padRight("slave", slaveW) + padRight("dir", 4) + padRight("proto", 6) + padRight("source", addrW) + padRight("destination", addrW) +
		padLeft("rate", 7) + " " + padRight("predicted", slaveW) + "  who"
	out = append(out, line{{truncate(hdr, width), th.heading}})
	index := map[string]int{}
	for i := range b.Slaves {
		index[b.Slaves[i].Name] = i
	}
	flows := d.measuredFlows(m)
	if len(flows) == 0 {
		msg := "no flow measured on " + b.Name
		if d.flows.slave != "" || d.flows.dir != dirBoth {
			msg = "no " + d.flows.dir.String() + " flow on " + filter
		}
		out = append(out, line{{msg, th.dim}})
	}
	rates := m.HaveRates()
	for n, f := range flows {
		if n == maxFlowRows {
			out = append(out, line{{fmt.Sprintf("... %d more flows (← → filter by slave, t by direction)", len(flows)-n), th.dim}})
			break
		}
		rate := "-"
		switch {
		case rates && f.HaveRate:
			rate = units.Short(f.Bps)
		case !rates:
			rate = units.Short(float64(f.Bytes)) + "B"
		}
		if f.Sampled && rate != "-" {
			rate = "~" + rate // counted 1 in N: an estimate
		}
		st := th.dim
		if i, ok := index[f.Slave]; ok {
			st = th.slave(i)
		}
		pred, predSt := "", th.dim
		if f.IsTx() {
			pred = orText(f.PredictedSlave(), "-")
			if i, ok := index[pred]; ok {
				predSt = th.slave(i)
			}
		}
		mark := "  "
		if f.Disagrees() {
			mark, predSt = " ≠", th.bad
		}
		who := ""
		switch {
		case f.Local:
			who = "local"
		case f.Forwarded:
			who = "fwd"
		}
		row := line{
			{padRight(f.Slave, slaveW), st},
			{padRight(f.Direction.String(), 4) + padRight(truncate(f.ProtoName(), 5), 6) +
				padRight(truncate(endpoint(f.Src, f.SrcPort, f.SrcMAC), addrW-1), addrW) +
				padRight(truncate(endpoint(f.Dst, f.DstPort, f.DstMAC), addrW-1), addrW) + padLeft(rate, 7) + " ", th.base},
			{padRight(pred, slaveW), predSt},
			{mark, th.bad},
			{who, th.dim},
		}
		out = append(out, row)
	}
	return out
}

// topTalkers are the busiest flows of one slave in each direction, for
// its details (Enter).
func (d *dashboard) topTalkers(b *model.BondSample, slave string) []line {
	th := d.th
	m := b.Measured
	if m == nil || !m.Metered() {
		return nil
	}
	out := []line{nil, {{"top talkers", th.heading}, {"  (" + meterSource(m) + "; f lists every flow)", th.dim}}}
	for _, dir := range []flowmeter.Direction{flowmeter.Tx, flowmeter.Rx} {
		n := 0
		for i := range m.Flows {
			f := &m.Flows[i]
			if f.Slave != slave || f.Direction != dir || f.Bps <= 0 {
				continue
			}
			if n == 5 {
				break
			}
			n++
			text := fmt.Sprintf("%s %-5s %s -> %s", dir, f.ProtoName(), endpoint(f.Src, f.SrcPort, f.SrcMAC), endpoint(f.Dst, f.DstPort, f.DstMAC))
			row := line{{padRight(truncate(text, 60), 61), th.base}, {padLeft(units.Short(f.Bps), 7), th.strong}}
			if f.Disagrees() {
				row = row.add("  predicted "+f.PredictedSlave(), th.bad)
			}
			out = append(out, row)
		}
		if n == 0 {
			out = append(out, line{{dir.String() + " nothing moved in the last interval", th.dim}})
		}
	}
	return out
}

// meterStatus is the meter's overhead for the status line: its flow map's
// fill ("meter ebpf 46/64k").
func meterStatus(b *model.BondSample) string {
	m := b.Measured
	if !m.Metered() {
		return ""
	}
	if m.MapSize <= 0 {
		return "meter " + m.Source // a recording: the map's fill is not in it
	}
	size := strconv.Itoa(m.MapSize)
	if m.MapSize >= 1024 && m.MapSize%1024 == 0 {
		size = strconv.Itoa(m.MapSize/1024) + "k"
	}
	src := m.Source
	switch {
	case m.Source == string(flowmeter.SourceSampled):
		src = "1:" + strconv.Itoa(m.SampleRate)
	case m.SampleRate > 1:
		src += " 1:" + strconv.Itoa(m.SampleRate)
	}
	return fmt.Sprintf("meter %s %d/%s", src, m.MapEntries, size)
}

// meterPaceHint says how often the flows are read when that is markedly
// less often than the screen moves (the dashboard reads the meter once a
// second below a second's pace): seconds is the span of the reading shown,
// which the snapshot carries, so the view needs no rule of the Sampler's.
func meterPaceHint(seconds float64, pace time.Duration) string {
	if seconds <= 0 || pace <= 0 || seconds < 1.5*pace.Seconds() {
		return ""
	}
	if every := math.Round(seconds); every > 1 {
		return "  (read every " + strconv.Itoa(int(every)) + " s)"
	}
	return "  (read each second)"
}
