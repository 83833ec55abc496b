package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/loadrun"
	"github.com/bondtop/bondtop/ui"
)

// isTerminal reports whether w is a terminal: the dashboard's condition.
// Piped or redirected, bondtop prints its plain text loop instead.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// dashboard runs the interactive screen until the user quits (q, Ctrl-C)
// or a signal arrives. The first sample is taken before the screen opens,
// so an unknown bond is reported like everywhere else in the CLI, on
// stderr with exit code 2, and never flashes a screen.
func dashboard(src collector.Source, o options) error {
	opts := o.samplerHandingBack(src)                      // the model hands back what it no longer shows
	opts.History = ui.GraphWindows[len(ui.GraphWindows)-1] // the longest graph
	// A flow table redrawn ten times a second cannot be read, and each
	// read of the meter walks the kernel's whole flow map.
	opts.MeterEvery = collector.DashboardMeterEvery
	s := collector.NewSampler(src, opts)
	first, err := s.Sample()
	if err != nil {
		return err
	}
	bond := ""
	if len(o.bonds) > 0 {
		bond = o.bonds[0]
	}
	// In the dashboard Ctrl-C is a key; these signals come from outside
	// (kill, a closed SSH session) and must still restore the terminal.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	uo := ui.Options{Feed: s, First: first, Bond: bond, NoMouse: o.noMouse}
	switch src := src.(type) {
	case *demo.Source:
		uo.Load = loadrun.Demo{Source: src}
	case *live.Source:
		uo.Load = loadrun.Live{}
	case collector.Relay:
		uo.LoadUnavailable = "The fleet view shows what Prometheus holds of other hosts: load tests run on the host itself (bondtop on it, or try --demo)."
	default:
		uo.LoadUnavailable = "Load tests run from the live host over its own bonds. --root shows a copy of another host's /proc and /sys: run bondtop on that host (or try --demo) to test a bond."
	}
	if o, ok := src.(interface{ Order() []string }); ok {
		uo.ListOrder = o.Order // the fleet: worst first
	}
	return ui.Run(ctx, uo)
}

// replayDashboard shows a recording on the dashboard.
func replayDashboard(feed *replayFeed, o options) error {
	bond := ""
	if len(o.bonds) > 0 {
		bond = o.bonds[0]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return ui.Run(ctx, ui.Options{Feed: feed, First: feed.First(), Bond: bond, NoMouse: o.noMouse,
		LoadUnavailable: "A recording replays what was; load tests need the live host. Run bondtop on the host that has the bond (or try --demo)."})
}
