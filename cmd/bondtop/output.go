package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/internal/printable"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/model"
)

// sampleAndPrint primes the sampler with one reading, then prints n
// snapshots one interval apart, each with rates over its interval. A link
// change between two of them is read when the kernel announces it: its
// events come in the next snapshot with their own times.
func sampleAndPrint(src collector.Source, o options, n int, w io.Writer) error {
	s := collector.NewSampler(src, o.samplerHandingBack(src)) // each snapshot is printed, then handed back
	if _, err := s.Sample(); err != nil {
		return err
	}
	// encoding/json writes C1 and bidi controls raw (docs/security.md).
	enc := json.NewEncoder(printable.NewJSONWriter(w))
	if o.once {
		enc.SetIndent("", "  ")
	}
	// A failed write (a closed pipe) ends the loop.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var writeErr error
	printed := 0
	err := s.Intervals(ctx, n, func(snap *model.Snapshot) {
		if writeErr != nil {
			return
		}
		if o.json {
			writeErr = enc.Encode(limitFlows(snap, o.top))
		} else {
			if printed > 0 {
				fmt.Fprintln(w)
			}
			writeErr = printSnapshot(w, snap)
		}
		printed++
		s.Release(snap)
		if writeErr != nil {
			stop()
		}
	})
	if err != nil {
		return err
	}
	return writeErr
}

// watch prints a table every interval until interrupted.
func watch(src collector.Source, o options, w io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s := collector.NewSampler(src, o.samplerHandingBack(src)) // each snapshot is printed, then handed back
	first := true
	return s.Run(ctx, func(snap *model.Snapshot) {
		defer s.Release(snap)
		if first {
			first = false // no rates yet: wait for the second reading
			return
		}
		fmt.Fprintf(w, "--- %s\n", snap.Time.Format("15:04:05.000"))
		_ = printSnapshot(w, snap)
	})
}

// listBonds prints the bonds of the host: name, mode, slaves, state.
func listBonds(src collector.Source, asJSON bool, w io.Writer) error {
	r, err := src.Read()
	if err != nil {
		return err
	}
	if asJSON {
		type entry struct {
			Name      string   `json:"name"`
			Kind      string   `json:"kind,omitempty"`
			Bridge    *string  `json:"bridge,omitempty"`
			Mode      *string  `json:"mode"`
			MIIStatus *string  `json:"mii_status"`
			Slaves    []string `json:"slaves"`
			SlavesUp  int      `json:"slaves_up"`
		}
		out := []entry{}
		for _, b := range r.Bonds {
			e := entry{Name: b.Name, Kind: b.Kind, Bridge: b.Bridge, Mode: b.Mode, MIIStatus: b.MIIStatus, Slaves: []string{}}
			for _, sl := range b.Slaves {
				e.Slaves = append(e.Slaves, sl.Name)
				if deref(sl.MIIStatus) == "up" {
					e.SlavesUp++
				}
			}
			out = append(out, e)
		}
		enc := json.NewEncoder(printable.NewJSONWriter(w))
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(r.Bonds) == 0 {
		fmt.Fprintln(w, "the bonding driver is loaded, but there are no bonds")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BOND\tMODE\tMII\tSLAVES\tUP")
	for _, b := range r.Bonds {
		names := make([]string, 0, len(b.Slaves))
		up := 0
		for _, sl := range b.Slaves {
			names = append(names, sl.Name)
			if deref(sl.MIIStatus) == "up" {
				up++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\n", printable.String(b.Name), listMode(&b), dash(b.MIIStatus), printable.String(strings.Join(names, ",")), up, len(b.Slaves))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, wmsg := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", printable.String(wmsg))
	}
	return nil
}

// printSnapshot writes the compact per-bond table of --once.
func printSnapshot(w io.Writer, snap *model.Snapshot) error {
	for i := range snap.Bonds {
		if i > 0 {
			fmt.Fprintln(w)
		}
		printBond(w, &snap.Bonds[i])
		printTraffic(w, &snap.Bonds[i], textTop)
	}
	for _, name := range snap.Missing {
		fmt.Fprintf(w, "%s: gone\n", printable.String(name))
	}
	for _, e := range snap.Events {
		fmt.Fprintf(w, "event %s %s\n", e.Time.Format("15:04:05.000"), printable.String(e.Message))
	}
	for _, n := range snap.Notes {
		fmt.Fprintf(w, "note: %s\n", printable.String(n))
	}
	for _, wmsg := range snap.Warnings {
		fmt.Fprintf(w, "warning: %s\n", printable.String(wmsg))
	}
	return nil
}

func printBond(w io.Writer, b *model.BondSample) {
	head := []string{b.Name, listMode(&b.Bond)}
	if b.XmitHashPolicy != nil {
		head = append(head, *b.XmitHashPolicy)
	}
	head = append(head, "mii "+dash(b.MIIStatus))
	if b.ActiveSlave != nil {
		head = append(head, "active "+*b.ActiveSlave)
	}
	if b.Primary != nil {
		head = append(head, "primary "+*b.Primary)
	}
	if l := b.LACP; l != nil {
		head = append(head, "lacp "+dash(l.Rate))
		if l.NoActiveAggregator {
			head = append(head, "NO ACTIVE AGGREGATOR")
		} else if l.AggregatorID != nil {
			agg := "aggregator " + strconv.Itoa(*l.AggregatorID)
			if l.NumPorts != nil {
				agg += fmt.Sprintf(" (%d ports)", *l.NumPorts)
			}
			head = append(head, agg)
		}
		if l.PartnerMAC != nil {
			head = append(head, "partner "+*l.PartnerMAC)
		}
	}
	fmt.Fprintln(w, printable.String(strings.Join(head, "  ")))
	fmt.Fprintf(w, "  rx %s  tx %s\n", bits(b.RxBps), bits(b.TxBps))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// FLOWS and PRED-TX (this host's sockets the hash sends on the slave,
	// and their payload rate) only where there is a flow table.
	flowCols := func(*model.SlaveSample) string { return "" }
	cols := "  SLAVE\tMII\tSTATE\tSPEED\tAGG\tACTOR\tPARTNER\tRX\tTX\tRX%\tTX%\tERR\tDROP\tFAILS"
	if b.Flows != nil {
		cols += "\tFLOWS\tPRED-TX"
		flowCols = func(s *model.SlaveSample) string {
			if s.Predicted == nil {
				return "\t-\t-"
			}
			return "\t" + strconv.Itoa(s.Predicted.Flows) + "\t" + bits(s.Predicted.TxBps)
		}
	}
	fmt.Fprintln(tw, cols)
	for i := range b.Slaves {
		s := &b.Slaves[i]
		speed := "-"
		if s.SpeedMbps != nil {
			speed = units.Speed(*s.SpeedMbps)
			if s.Duplex != nil && *s.Duplex != "full" {
				speed += "/" + printable.String(*s.Duplex)
			}
		}
		agg := intDash(s.AggregatorID)
		if b.LACP != nil && b.LACP.AggregatorID != nil && s.AggregatorID != nil && *s.AggregatorID != *b.LACP.AggregatorID {
			agg += "*" // not in the bond's active aggregator: carries nothing
		}
		var actor, partner *bonding.PortState
		if s.Actor != nil {
			actor = s.Actor.PortState
		}
		if s.Partner != nil {
			partner = s.Partner.PortState
		}
		errs, drops := "-", "-"
		if iv := s.Interval; iv != nil {
			errs = sumDash(iv.RxErrors, iv.TxErrors)
			drops = sumDash(iv.RxDropped, iv.TxDropped, iv.RxOverErrors, iv.RxFifoErrors)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n",
			printable.String(s.Name), dash(s.MIIStatus), dash(s.State), speed, agg, stateDash(actor), stateDash(partner),
			bits(s.RxBps), bits(s.TxBps), pct(s.ShareRx), pct(s.ShareTx), errs, drops, intDash(s.LinkFailureCount), flowCols(s))
	}
	_ = tw.Flush()
	printFindings(w, b.Findings)
}

// printFindings lists a bond's findings under its table, one line each;
// --json carries the why and what to do (detail) too.
func printFindings(w io.Writer, fs []model.Finding) {
	for _, f := range fs {
		fmt.Fprintf(w, "  %-8s %s  [%s]\n", printable.String(strings.ToUpper(string(f.Severity))), printable.String(f.Message), printable.String(f.ID))
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// dash is a text field as printed: "-" when unknown, control characters
// made visible (it came from the host, a tree or a recording).
func dash(p *string) string {
	if p == nil {
		return "-"
	}
	return printable.String(*p)
}

func intDash(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}

func stateDash(p *bonding.PortState) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(int(*p))
}

func bits(p *float64) string {
	if p == nil {
		return "-"
	}
	return units.Bits(*p)
}

func pct(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", *p*100)
}

// sumDash adds the counts that are known; "-" when none is.
func sumDash(ps ...*uint64) string {
	var sum uint64
	known := false
	for _, p := range ps {
		if p != nil {
			sum += *p
			known = true
		}
	}
	if !known {
		return "-"
	}
	return strconv.FormatUint(sum, 10)
}
