//go:build !nometrics

package main

// The fleet view's reader: it needs net/http and the Prometheus client,
// which a -tags nometrics build leaves out (fleet_off.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/bondtop/bondtop/fleet"
	"github.com/bondtop/bondtop/internal/printable"
)

// fleetDoc is one JSON document of the fleet: the local --json's shape
// (docs/json.md) with bonds of many hosts, each naming its instance and
// job.
type fleetDoc struct {
	Time       time.Time        `json:"time"`
	Prometheus string           `json:"prometheus"`
	Bonds      []fleet.Bond     `json:"bonds"`
	Exporters  []fleet.Exporter `json:"exporters"`
	Events     []struct{}       `json:"events"`
	Warnings   []string         `json:"warnings"`
	Notes      []string         `json:"notes"`
}

// runFleet shows the fleet on the dashboard (a terminal, no --once,
// --count or list), or reads it once (--once, list), --count times, or
// (piped) until interrupted, one --interval apart.
func runFleet(o options, w io.Writer) error {
	interactive := o.command == "" && !o.once && o.count == 0 && isTerminal(w)
	detail := fleet.DetailList
	switch {
	case interactive:
		detail = fleet.DetailLinks // and the bond on screen in full (fleet.Source)
	case o.json && o.command != "list":
		detail = fleet.DetailFull
	}
	c, err := fleet.New(fleet.Config{URL: o.fleet.url, Match: o.fleet.match, HTTPConfigFile: o.fleet.configFile, Detail: detail})
	if err != nil {
		return usageError{err} // a flag or its file, not Prometheus
	}
	if interactive {
		// Prometheus holds a sample a scrape: asking more often than
		// every few seconds shows nothing new.
		src := fleet.NewSource(c, max(o.interval, fleet.DefaultRefresh))
		return dashboard(src, o)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	n := o.count
	if o.once || o.command == "list" {
		n = 1
	}
	enc := json.NewEncoder(printable.NewJSONWriter(w))
	if n == 1 {
		enc.SetIndent("", "  ")
	}
	for i := 0; n <= 0 || i < n; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(o.interval):
			}
		}
		f, err := c.Read(ctx)
		if err != nil {
			return err
		}
		switch {
		case o.json && o.command == "list":
			err = enc.Encode(f.Bonds)
		case o.json:
			err = enc.Encode(fleetDoc{Time: f.Time, Prometheus: f.URL, Bonds: f.Bonds, Exporters: f.Exporters,
				Events: []struct{}{}, Warnings: nonNil(f.Warnings), Notes: []string{}})
		default:
			if i > 0 {
				fmt.Fprintln(w)
			}
			err = printFleet(w, f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// printFleet writes the list: one instance and bond a line, worst first;
// then the exporters that serve no bond.
func printFleet(w io.Writer, f *fleet.Fleet) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tBOND\tJOB\tMODE\tSLAVES\tTX\tRX\tWORST")
	for i := range f.Bonds {
		b := &f.Bonds[i]
		slaves := "-"
		if b.SlavesUp != nil && b.SlavesTotal != nil {
			slaves = strconv.Itoa(*b.SlavesUp) + "/" + strconv.Itoa(*b.SlavesTotal)
		}
		worst := b.Worst()
		if !b.ExporterUp {
			worst = "exporter down (as last seen)"
		} else if worst == "" {
			worst = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable.String(b.Instance), printable.String(b.Name), printable.String(b.Job),
			dash(b.Mode), slaves, bits(b.TxBps), bits(b.RxBps), printable.String(worst))
	}
	for _, e := range f.Exporters {
		if e.Bonds > 0 {
			continue
		}
		what := "no bonds"
		if !e.Up {
			what = "exporter down"
		}
		fmt.Fprintf(tw, "%s\t-\t%s\t-\t-\t-\t-\t%s\n", printable.String(e.Instance), printable.String(e.Job), what)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(f.Bonds) == 0 && len(f.Exporters) == 0 {
		fmt.Fprintf(w, "prometheus at %s holds no bondtop metrics (check --prometheus-match and that it scrapes bondtop --listen)\n", f.URL)
	}
	for _, m := range f.Warnings {
		fmt.Fprintf(w, "warning: %s\n", printable.String(m))
	}
	return nil
}

// fleetSupported: this build has the Prometheus client.
func fleetSupported() error { return nil }
