//go:build !nometrics

package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/netutil"

	"github.com/bondtop/bondtop/internal/loglimit"
	"github.com/bondtop/bondtop/internal/printable"
	"github.com/bondtop/bondtop/internal/webconfig"
	"github.com/bondtop/bondtop/metrics"
)

// This file is the /metrics server: net/http, TLS, package metrics and
// internal/webconfig. A build with -tags nometrics leaves it out
// (metrics_off.go): a program 3.6 MB smaller, whose dashboard keeps some
// 0.6 MB less of it resident (README, "Lighter than bmon", step 31).

// buildNote follows the version: this build leaves nothing out.
const buildNote = ""

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
// clear. internal/webconfig reads and checks the file in the format every
// Prometheus exporter's --web.config.file takes: the YAML (strictly: an
// unknown key is an error), the password hashes, the certificate and key.
// The scheme, "https" when the file turns TLS on and "http" otherwise, is
// what the "serving metrics on" line says.
func checkWebConfig(listen, file string) (scheme string, err error) {
	if file == "" {
		return "http", nil
	}
	if listen == "" {
		return "", errors.New("--web.config.file needs --listen ADDR:PORT (it configures the metrics server)")
	}
	c, err := webconfig.Load(file)
	if err != nil {
		// YAML errors come in lines ("unmarshal errors:\n  line 2: ..."):
		// one line reads better than an escaped newline.
		msg := strings.Join(strings.Fields(err.Error()), " ")
		return "", fmt.Errorf("--web.config.file %s: %s", file, printable.String(msg))
	}
	if c.TLSEnabled() {
		return "https", nil
	}
	return "http", nil
}

// startMetrics listens on addr and serves /metrics from the snapshots the
// returned exporter's Update receives. Listening happens before the first
// sample, so a busy port is reported before anything else starts.
//
// webConfig, if not empty, is a web config file in the Prometheus exporter
// convention (TLS, basic auth), already checked by checkWebConfig;
// internal/webconfig applies it, reading it again when it (or a
// certificate or key it names) changed, on every connection and request,
// so a renewed certificate or a changed password needs no restart.
func startMetrics(addr, webConfig string, stderr io.Writer) (srv metricsServer, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	exp := metrics.New(metrics.Version(buildVersion()))
	// Any client can provoke a log line (a failed TLS handshake, a
	// scanner speaking plain HTTP to the TLS port): ten at once, then one
	// every two seconds.
	logs := loglimit.New(10, 2*time.Second).Writer(stderr)
	errorLog := log.New(logs, "bondtop: metrics server: ", 0)
	hs := &http.Server{
		Handler:           metricsMux(exp.Handler(errorLog)),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       metricsReadTimeout,
		WriteTimeout:      metricsWriteTimeout,
		IdleTimeout:       metricsIdleTimeout,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          errorLog,
	}
	// A web config file that went bad while serving is logged once (and
	// once when it is usable again); its path and YAML errors are text
	// from outside, shown rather than obeyed on a terminal.
	logf := func(format string, args ...any) {
		errorLog.Print(printable.String(fmt.Sprintf(format, args...)))
	}
	go func() {
		// Beyond metricsMaxConns, connections wait in the kernel's
		// backlog (no descriptor, no goroutine) until one closes.
		limited := netutil.LimitListener(ln, metricsMaxConns)
		if err := webconfig.Serve(limited, hs, webConfig, logf); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "bondtop: metrics server: %s\n", printable.String(err.Error()))
		}
	}()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
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
