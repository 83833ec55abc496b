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

	"github.com/coreos/go-systemd/v22/activation"

	"github.com/bondtop/bondtop/internal/loglimit"
	"github.com/bondtop/bondtop/internal/printable"
	"github.com/bondtop/bondtop/metrics"
	"github.com/bondtop/bondtop/metrics/webguard"
)

// This file is the /metrics server: net/http, the exporter toolkit (TLS,
// basic auth) behind package metrics/webguard, and package metrics (the
// Prometheus Go client). A build with -tags nometrics leaves it out
// (metrics_off.go), for a smaller program.

// buildNote follows the version: this build leaves nothing out.
const buildNote = ""

// The /metrics server's timeouts: a scraper sends its request at once
// and reads the answer in a fraction of a second, so a connection that
// says nothing (a silent TLS handshake, no request line) is dropped
// within seconds; the connection limits are metrics/webguard's.
const (
	metricsHeaderTimeout = 3 * time.Second  // also bounds the TLS handshake
	metricsIdleTimeout   = 30 * time.Second // above a 15 s scrape interval: keep-alive still pays
	metricsReadTimeout   = 10 * time.Second
	metricsWriteTimeout  = 10 * time.Second
)

// checkWebConfig refuses a --web.config.file that the server could not
// use, at start (with the usage errors), naming the file: TLS and basic
// auth are what protect the metrics, so a typo must not serve them in the
// clear. The exporter toolkit checks the file as every exporter's
// --web.config.file (web.Validate), and metrics/webguard adds its bound
// on bcrypt costs and reads it without ever blocking. The scheme, "https"
// when the file turns TLS on and "http" otherwise, is what the "serving
// metrics on" line says.
func checkWebConfig(listen, file string) (scheme string, err error) {
	if file == "" {
		return "http", nil
	}
	if listen == "" {
		return "", errors.New("--web.config.file needs --listen ADDR:PORT (it configures the metrics server)")
	}
	tls, _, err := webguard.Check(file)
	if err != nil {
		// YAML errors come in lines ("unmarshal errors:\n  line 2: ..."):
		// one line reads better than an escaped newline.
		msg := strings.Join(strings.Fields(err.Error()), " ")
		return "", fmt.Errorf("--web.config.file %s: %s", file, printable.String(msg))
	}
	if tls {
		return "https", nil
	}
	return "http", nil
}

// startMetrics listens on addr (or takes systemd's socket) and serves
// /metrics from the snapshots the returned exporter's Update receives.
// Listening happens before the first sample, so a busy port is reported
// before anything else starts.
//
// webConfig, if not empty, is a web config file in the Prometheus exporter
// convention (TLS, basic auth), already checked by checkWebConfig;
// metrics/webguard serves it through the exporter toolkit, taking a
// changed file when it is complete and protects as much
// (docs/web-config.md).
func startMetrics(addr, webConfig string, stderr io.Writer) (srv metricsServer, stop func(), err error) {
	ln, err := metricsListener(addr)
	if err != nil {
		return nil, nil, err
	}
	exp := metrics.New(metrics.Version(buildVersion()))
	// Any client can provoke a log line (a failed TLS handshake, a
	// scanner speaking plain HTTP to the TLS port): ten at once, then one
	// every two seconds. Every line is text from outside (paths, YAML
	// errors, addresses): shown, never obeyed, on a terminal.
	logs := printableWriter{loglimit.New(10, 2*time.Second).Writer(stderr)}
	errorLog := log.New(logs, "bondtop: metrics server: ", 0)
	hs := &http.Server{
		Handler:           metricsMux(exp.Handler(errorLog)),
		ReadHeaderTimeout: metricsHeaderTimeout,
		ReadTimeout:       metricsReadTimeout,
		WriteTimeout:      metricsWriteTimeout,
		IdleTimeout:       metricsIdleTimeout,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          errorLog,
		// A scrape is one request: a few streams per HTTP/2 connection
		// are plenty, and bound what one connection makes the server do.
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 8},
	}
	go func() {
		// The web config's own lines (a reload, a refused file) have a
		// budget of their own: clients cannot crowd them out.
		configLog := log.New(printableWriter{loglimit.New(10, 2*time.Second).Writer(stderr)}, "bondtop: metrics server: ", 0)
		err := webguard.Serve(ln, hs, webguard.Options{ConfigFile: webConfig, Log: logWriter{configLog}})
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			errorLog.Print(err.Error())
		}
	}()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}
	return exp, stop, nil
}

// metricsListener listens on addr, or takes the socket systemd passes
// for --web.systemd-socket.
func metricsListener(addr string) (net.Listener, error) {
	if addr != systemdListen {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("--listen %s: %w", addr, err)
		}
		return ln, nil
	}
	lns, err := activation.Listeners()
	if err != nil {
		return nil, fmt.Errorf("--web.systemd-socket: %w", err)
	}
	for _, ln := range lns {
		if ln != nil {
			return ln, nil
		}
	}
	return nil, errors.New("--web.systemd-socket: systemd passed no socket (LISTEN_FDS): start bondtop from its .socket unit, or give --listen")
}

// logWriter writes each line to a log.Logger, with its prefix.
type logWriter struct{ l *log.Logger }

func (w logWriter) Write(b []byte) (int, error) {
	for line := range strings.Lines(string(b)) {
		w.l.Print(strings.TrimSuffix(line, "\n"))
	}
	return len(b), nil
}

// printableWriter makes every line it writes printable.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	s := strings.TrimSuffix(string(b), "\n")
	if _, err := io.WriteString(p.w, printable.String(s)+"\n"); err != nil {
		return 0, err
	}
	return len(b), nil
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
