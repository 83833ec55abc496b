package main

import (
	"errors"
	"fmt"
	"github.com/bondtop/bondtop/internal/printable"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/model"
)

// The flow meter's wiring: opened on a live host (not with --demo, which
// simulates one, nor --root or --replay), handed to the Sampler, closed
// on exit; and the "traffic" part of --once, --count and --record.

// defaultTop is how many flows per bond --json and --record keep;
// textTop how many the text of --once and --count lists.
const (
	defaultTop = 50
	textTop    = 10
)

// openMeter opens the in-kernel flow meter (eBPF, else the sampled
// fallback); a variable so that tests can run without one (nil).
var openMeter = flowmeter.Open

// startMeter opens the meter for a live run. It returns the meter (nil
// when there is none) and, without one, the reason every bond's traffic
// gives (source "sockets").
func startMeter(o *options) (flowmeter.Meter, string) {
	if openMeter == nil {
		return nil, "this build of bondtop has no flow meter: only this host's own sockets show"
	}
	budget := o.meterBudget
	if budget == 0 {
		budget = -1 // the flag's 0: every packet
	}
	m, err := openMeter(flowmeter.Options{MaxFlows: o.flowMapSize, NoEBPF: o.noEBPF, Budget: budget})
	if err != nil {
		return nil, whyNoMeter(err)
	}
	return m, ""
}

// whyNoMeter says what the meter needed and what root would add.
func whyNoMeter(err error) string {
	if errors.Is(err, os.ErrPermission) || os.Geteuid() != 0 {
		return "the flow meter needs root (CAP_BPF and CAP_NET_ADMIN for eBPF at the slaves, or CAP_NET_RAW for sampling): run bondtop with sudo to see every flow on every slave in both directions, forwarded, bridged and VM traffic included; until then only this host's own sockets show (" + err.Error() + ")"
	}
	return "the flow meter could not start (" + err.Error() + "): only this host's own sockets show"
}

// limitFlows returns snap with at most n flows in each bond's traffic
// (the busiest): snap itself when none has more. The snapshot is shared,
// so the bonds are copied, never edited.
func limitFlows(snap *model.Snapshot, n int) *model.Snapshot {
	over := false
	for i := range snap.Bonds {
		if m := snap.Bonds[i].Measured; m != nil && len(m.Flows) > n {
			over = true
		}
	}
	if !over {
		return snap
	}
	c := *snap
	c.Bonds = make([]model.BondSample, len(snap.Bonds))
	copy(c.Bonds, snap.Bonds)
	for i := range c.Bonds {
		c.Bonds[i].Measured = c.Bonds[i].Measured.Top(n)
	}
	return &c
}

// printTraffic writes a bond's measured traffic under its table: the
// source, the hash check, and the top talkers (at most top).
func printTraffic(w io.Writer, b *model.BondSample, top int) {
	m := b.Measured
	if m == nil {
		return
	}
	if !m.Metered() {
		fmt.Fprintf(w, "  traffic: sockets only: %s\n", m.Why)
		return
	}
	head := fmt.Sprintf("  traffic: %s, %d flows", m.Source, len(m.Flows))
	switch {
	case m.Source == string(flowmeter.SourceSampled):
		head = fmt.Sprintf("  traffic: sampled 1:%d (estimates), %d flows", m.SampleRate, len(m.Flows))
	case m.SampleRate > 1:
		head = fmt.Sprintf("  traffic: %s, 1:%d above --meter-budget (estimates), %d flows", m.Source, m.SampleRate, len(m.Flows))
	}
	if a := m.Agreement; a.Flows > 0 {
		head += fmt.Sprintf(", hash check %d of %d tx flows on the predicted slave", a.Agree, a.Flows-a.Unpredictable)
		if a.Unpredictable > 0 {
			head += fmt.Sprintf(" (%d unpredictable)", a.Unpredictable)
		}
	}
	if lost := m.LostBytes(); lost > 0 {
		head += fmt.Sprintf(", %d bytes in no flow (the flow map was full: --flow-map-size)", lost)
	}
	fmt.Fprintln(w, head)
	if !m.HaveRates() || top == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  SLAVE\tDIR\tPROTO\tSOURCE\tDESTINATION\tRATE\tPREDICTED\tLOCAL")
	for i := range m.Flows[:min(top, len(m.Flows))] {
		f := &m.Flows[i]
		if f.Bps == 0 {
			break
		}
		pred := "-"
		if p := f.PredictedSlave(); p != "" {
			pred = printable.String(p)
			if f.Disagrees() {
				pred += " (differs)"
			}
		}
		local := "-"
		switch {
		case f.Local:
			local = "yes"
		case f.Forwarded:
			local = "fwd"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable.String(f.Slave), f.Direction, f.ProtoName(),
			endpoint(f.Src.String(), f.SrcPort, f.Src.IsValid()), endpoint(f.Dst.String(), f.DstPort, f.Dst.IsValid()),
			units.Bits(f.Bps), pred, local)
	}
	_ = tw.Flush()
}

// endpoint writes an address and port as ss does: 10.0.0.1:443,
// [2001:db8::1]:443; "-" for frames that are not IP.
func endpoint(addr string, port uint16, ok bool) string {
	if !ok {
		return "-"
	}
	if strings.Contains(addr, ":") {
		addr = "[" + addr + "]"
	}
	if port == 0 {
		return addr
	}
	return fmt.Sprintf("%s:%d", addr, port)
}
