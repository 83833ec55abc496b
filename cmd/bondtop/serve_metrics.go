package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v3"
	"golang.org/x/net/netutil"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/drill"
	"github.com/bondtop/bondtop/internal/loglimit"
	"github.com/bondtop/bondtop/internal/printable"
	"github.com/bondtop/bondtop/metrics"
)

// samplerOptions are the Sampler settings every mode shares, with the
// sinks (metrics, recorder) the flags asked for, the flow table, and the
// diagnosis that fills every snapshot's findings (a window of its own per
// Sampler). No mode but the dashboard reads a rate history, so none is
// kept unless the caller asks for one.
func (o *options) samplerOptions(src collector.Source) collector.Options {
	so := collector.Options{Interval: o.interval, Bonds: o.bonds, Sinks: o.sinks,
		Flows: o.flows, Meter: o.meter, MeterWhy: o.meterWhy, Analyze: diagnose.NewWindow(0).Fill,
		History: collector.NoHistory}
	if _, live := src.(*collector.LiveSource); live {
		// A drill killed mid-way on this host shows as a finding, in
		// every mode: the dashboard, the text and JSON outputs, /metrics.
		so.Analyze = drill.WithLeftBehind(so.Analyze, drill.DefaultStateDir)
	}
	return so
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

// checkWebConfig refuses a --web.config.file that the server could not
// use, at start (with the usage errors), naming the file: TLS and basic
// auth are what protect the metrics, so a typo must not serve them in the
// clear. The Prometheus exporter toolkit reads and checks the file, as it
// does for every exporter that takes this flag: the YAML (strictly: an
// unknown key is an error), the password hashes, the certificate and key.
func checkWebConfig(listen, file string) error {
	if file == "" {
		return nil
	}
	if listen == "" {
		return errors.New("--web.config.file needs --listen ADDR:PORT (it configures the metrics server)")
	}
	if err := web.Validate(file); err != nil {
		// YAML errors come in lines ("unmarshal errors:\n  line 2: ..."):
		// one line reads better than an escaped newline.
		msg := strings.Join(strings.Fields(err.Error()), " ")
		return fmt.Errorf("--web.config.file %s: %s", file, printable.String(msg))
	}
	return nil
}

// metricsScheme is "https" when the web config file (already checked)
// turns TLS on, "http" otherwise: what the "serving metrics on" line says.
func metricsScheme(webConfig string) string {
	if webConfig == "" {
		return "http"
	}
	var c struct {
		TLS web.TLSConfig `yaml:"tls_server_config"`
	}
	if b, err := os.ReadFile(webConfig); err != nil || yaml.Unmarshal(b, &c) != nil || !c.TLS.IsEnabled() {
		return "http"
	}
	return "https"
}

// startMetrics listens on addr and serves /metrics from the snapshots the
// returned exporter's Update receives. Listening happens before the first
// sample, so a busy port is reported before anything else starts.
//
// webConfig, if not empty, is a web config file in the Prometheus exporter
// convention (TLS, basic auth), already checked by checkWebConfig; the
// exporter toolkit applies it, rereading it on every request and the
// certificate on every connection, so a renewed certificate or a changed
// password needs no restart.
func startMetrics(addr, webConfig string, stderr io.Writer) (exp *metrics.Exporter, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	exp = metrics.New(metrics.Version(buildVersion()))
	// Any client can provoke a log line (a failed TLS handshake, a
	// scanner speaking plain HTTP to the TLS port): ten at once, then one
	// every two seconds.
	logs := loglimit.New(10, 2*time.Second).Writer(stderr)
	srv := &http.Server{
		Handler:           metricsMux(exp.Handler()),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       metricsReadTimeout,
		WriteTimeout:      metricsWriteTimeout,
		IdleTimeout:       metricsIdleTimeout,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          log.New(logs, "bondtop: metrics server: ", 0),
	}
	go func() {
		// Beyond metricsMaxConns, connections wait in the kernel's
		// backlog (no descriptor, no goroutine) until one closes.
		limited := netutil.LimitListener(ln, metricsMaxConns)
		// The toolkit logs its start at Info (we say "serving metrics"
		// ourselves) and a web config file that went bad after the start
		// at Error, on every request it then refuses (500).
		logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelError}))
		flags := &web.FlagConfig{WebConfigFile: &webConfig}
		if err := web.Serve(limited, srv, flags, logger); err != nil && !errors.Is(err, http.ErrServerClosed) {
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

// landingPage is what a browser pointed at the exporter sees: where the
// metrics are, as every Prometheus exporter's root page says.
const landingPage = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>bondtop exporter</title></head>
<body>
<h1>bondtop exporter</h1>
<p>Linux bonding, as bondtop sees it, for Prometheus.</p>
<ul>
<li><a href="/metrics">Metrics</a></li>
<li><a href="/-/healthy">Health</a></li>
</ul>
<p>Version %s</p>
</body>
</html>
`

// metricsMux routes the exporter's paths: the landing page at /, the
// metrics at /metrics and a liveness check at /-/healthy, all read-only:
// any method but GET and HEAD is refused (405).
func metricsMux(metricsHandler http.Handler) http.Handler {
	page := fmt.Sprintf(landingPage, html.EscapeString(buildVersion()))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler)
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "OK")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	return mux
}

// headless samples until SIGINT or SIGTERM, feeding the sinks only: the
// mode of a fleet host that Prometheus scrapes. Only the first read can
// end it (a tree or bond that is not there is a mistake to report); a
// later failed read is reported once, counted in the metrics, and tried
// again every interval.
func headless(src collector.Source, o options, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := collector.NewSampler(src, o.samplerOptions(src))
	if _, err := s.Sample(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bondtop: serving metrics on %s://%s/metrics every %v; Ctrl-C stops\n", metricsScheme(o.webConfig), o.listen, o.interval)
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
