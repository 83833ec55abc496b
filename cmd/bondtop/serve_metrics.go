package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/metrics"
)

// samplerOptions are the Sampler settings every mode shares, with the
// sinks (metrics, recorder) the flags asked for, the flow table, and the
// diagnosis that fills every snapshot's findings (a window of its own per
// Sampler).
func (o *options) samplerOptions() collector.Options {
	return collector.Options{Interval: o.interval, Bonds: o.bonds, Sinks: o.sinks,
		Flows: o.flows, Meter: o.meter, MeterWhy: o.meterWhy, Analyze: diagnose.NewWindow(0).Fill}
}

// startMetrics listens on addr and serves /metrics from the snapshots the
// sampler hands to the returned sink. Listening happens before the first
// sample, so a busy port is reported before anything else starts.
func startMetrics(addr string, stderr io.Writer) (sink func(*collector.Snapshot), stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	exp := metrics.New()
	mux := http.NewServeMux()
	mux.Handle("/metrics", exp.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "bondtop: metrics are at /metrics")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "bondtop: metrics server: %v\n", err)
		}
	}()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return exp.Update, stop, nil
}

// headless samples until SIGINT or SIGTERM, feeding the sinks only: the
// mode of a fleet host that Prometheus scrapes.
func headless(src collector.Source, o options, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := collector.NewSampler(src, o.samplerOptions())
	if _, err := s.Sample(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bondtop: serving metrics on http://%s/metrics every %v; Ctrl-C stops\n", o.listen, o.interval)
	return s.Run(ctx, func(*collector.Snapshot) {})
}
