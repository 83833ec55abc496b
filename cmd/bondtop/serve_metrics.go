package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/drill"
	"github.com/bondtop/bondtop/model"
)

// samplerOptions are the Sampler settings every mode shares, with the
// sinks (metrics, recorder) the flags asked for, the flow table, and the
// diagnosis that fills every snapshot's findings (a window of its own per
// Sampler). No mode but the dashboard reads a rate history, so none is
// kept unless the caller asks for one.
//
// A mode that hands back each snapshot once it is done with it takes
// samplerHandingBack instead.
func (o *options) samplerOptions(src collector.Source) collector.Options {
	so := collector.Options{Interval: o.interval, Bonds: o.bonds, Sinks: o.sinks,
		Flows: o.flows, Meter: o.meter, MeterWhy: o.meterWhy, Analyze: diagnose.NewWindow(0).Fill,
		History: collector.NoHistory, StayUp: o.headless}
	if _, relay := src.(collector.Relay); relay {
		// Its findings are the other bondtop's; a diagnosis here would
		// see only what the metrics carry.
		so.Analyze = nil
	}
	if _, onHost := src.(*live.Source); onHost {
		// A drill killed mid-way on this host shows as a finding, in
		// every mode: the dashboard, the text and JSON outputs, /metrics.
		so.Analyze = drill.WithLeftBehind(so.Analyze, drill.DefaultStateDir)
	}
	return so
}

// samplerHandingBack is samplerOptions for a mode that hands back each
// snapshot once it is done with it (the dashboard, the text and JSON
// outputs): the Sampler fills them again, unless a sink keeps them.
func (o *options) samplerHandingBack(src collector.Source) collector.Options {
	so := o.samplerOptions(src)
	so.Recycle = !o.sinkKeeps
	return so
}

// metricsServer is a running /metrics server as the sampler feeds it:
// every snapshot, and every failed read (bondtop_read_success); Wake asks
// --headless's Sampler for a snapshot when a scrape wants fresh counters.
type metricsServer interface {
	Update(*model.Snapshot)
	ReadFailed()
	Wake() <-chan struct{}
}

// headless samples until SIGINT or SIGTERM, feeding the sinks only: the
// mode of a fleet host that Prometheus scrapes. Its Sampler ticks at the
// interval (the diagnosis' pace) and also samples when a scrape finds the
// latest snapshot too old (metrics.FreshAge): the counters a scrape gets
// are read when it asks, as node_exporter's are. No read ends it: a host
// without the driver or the bonds asked for is served as such
// (Options.StayUp), and a failed read is reported once, counted in the
// metrics, and tried again every interval.
func headless(src collector.Source, o options, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	so := o.samplerOptions(src)
	so.Wake = o.metricsWake
	s := collector.NewSampler(src, so)
	fmt.Fprintf(stderr, "bondtop: serving metrics on %s://%s/metrics every %v; Ctrl-C stops\n", o.metricsScheme, o.listen, o.interval)
	failing := ""
	recovered := func(*model.Snapshot) {
		if failing != "" {
			fmt.Fprintln(stderr, "bondtop: reading again")
			failing = ""
		}
	}
	for {
		err := s.Run(ctx, recovered)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		if o.readFailed != nil {
			o.readFailed()
		}
		if err.Error() != failing {
			failing = err.Error()
			fmt.Fprintf(stderr, "bondtop: %v (bondtop_read_success is 0 until a read succeeds; trying again every %v)\n", err, s.Interval())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.Interval()):
		}
	}
}
