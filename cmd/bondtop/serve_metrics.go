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

	"golang.org/x/net/netutil"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/metrics"
)

// samplerOptions are the Sampler settings every mode shares, with the
// sinks (metrics, recorder) the flags asked for, the flow table, and the
// diagnosis that fills every snapshot's findings (a window of its own per
// Sampler). No mode but the dashboard reads a rate history, so none is
// kept unless the caller asks for one.
func (o *options) samplerOptions() collector.Options {
	return collector.Options{Interval: o.interval, Bonds: o.bonds, Sinks: o.sinks,
		Flows: o.flows, Analyze: diagnose.NewWindow(0).Fill, History: collector.NoHistory}
}

// The /metrics server's bounds: a scraper needs one connection and a
// fraction of a second, so a few dozen connections and seconds are
// plenty, and idle or slow ones cannot pile up until the process runs
// out of file descriptors (which would stop its reads of the host too).
const (
	metricsMaxConns     = 64
	metricsIdleTimeout  = 30 * time.Second // above a 15 s scrape interval: keep-alive still pays
	metricsReadTimeout  = 10 * time.Second
	metricsWriteTimeout = 10 * time.Second
)

// startMetrics listens on addr and serves /metrics from the snapshots the
// returned exporter's Update receives. Listening happens before the first
// sample, so a busy port is reported before anything else starts.
func startMetrics(addr string, stderr io.Writer) (exp *metrics.Exporter, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	exp = metrics.New()
	mux := http.NewServeMux()
	mux.Handle("/metrics", exp.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "bondtop: metrics are at /metrics")
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       metricsReadTimeout,
		WriteTimeout:      metricsWriteTimeout,
		IdleTimeout:       metricsIdleTimeout,
		MaxHeaderBytes:    16 << 10,
	}
	go func() {
		// Beyond metricsMaxConns, connections wait in the kernel's
		// backlog (no descriptor, no goroutine) until one closes.
		if err := srv.Serve(netutil.LimitListener(ln, metricsMaxConns)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "bondtop: metrics server: %v\n", err)
		}
	}()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return exp, stop, nil
}

// headless samples until SIGINT or SIGTERM, feeding the sinks only: the
// mode of a fleet host that Prometheus scrapes. Only the first read can
// end it (a tree or bond that is not there is a mistake to report); a
// later failed read is reported once, counted in the metrics, and tried
// again every interval.
func headless(src collector.Source, o options, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := collector.NewSampler(src, o.samplerOptions())
	if _, err := s.Sample(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bondtop: serving metrics on http://%s/metrics every %v; Ctrl-C stops\n", o.listen, o.interval)
	failing := ""
	recovered := func(*collector.Snapshot) {
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
