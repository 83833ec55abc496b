package metrics

import (
	"context"
	"log"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// This file owns what a scrape gets: the registry (bondtop's families,
// the client's Go and process collectors) behind promhttp's handler, and
// a fresh read of the host when the latest one is older than a scrape
// may take.

// FreshAge is how old the latest snapshot may be for a scrape to be
// served from it; an older one makes the scrape wait for a new read (see
// Exporter.Fresh). Less than the shortest scrape interval anyone uses
// (1 s), so each scrape's counters are as of that scrape, give or take
// FreshAge, never a sampler tick's worth apart from it; and however many
// scrapers ask, the host is read at most about once per FreshAge.
const FreshAge = 500 * time.Millisecond

// freshWait bounds the wait for a fresh read: a scrape is better served
// late counters than none. A scrape that tells its timeout
// (X-Prometheus-Scrape-Timeout-Seconds) waits at most half of it.
const freshWait = 2 * time.Second

// Registry returns a registry with the exporter's families and the Go
// client's Go and process collectors: what /metrics serves.
func (e *Exporter) Registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(e, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves /metrics with promhttp: the text format, or OpenMetrics
// when the scraper asks for it, compressed when it accepts that. A series
// the registry cannot gather (a bug) is left out and logged to errorLog
// (may be nil), the rest served. Before gathering, it waits for fresh
// counters (Fresh).
func (e *Exporter) Handler(errorLog *log.Logger) http.Handler {
	opts := promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
		// No MaxRequestsInFlight: its 503 would lock a scraper out
		// during a flood; the server's connection limits bound how many
		// requests run at once (docs/web-config.md).
	}
	if errorLog != nil {
		opts.ErrorLog = errorLog
	}
	h := promhttp.HandlerFor(e.Registry(), opts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		wait := freshWait
		if s := r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"); s != "" {
			if t, err := strconv.ParseFloat(s, 64); err == nil && t > 0 && time.Duration(t*float64(time.Second)/2) < wait {
				wait = time.Duration(t * float64(time.Second) / 2)
			}
		}
		ctx, cancel := context.WithTimeout(ctx, wait)
		e.Fresh(ctx)
		cancel()
		h.ServeHTTP(w, r)
	})
}

// Wake returns the channel a Sampler reads to make a snapshot at once
// (collector.Options.Wake): Fresh sends on it when the latest snapshot is
// older than FreshAge. A mode that does not hand it to a Sampler (the
// dashboard, whose history keeps its own pace) serves its latest
// snapshot as it is.
func (e *Exporter) Wake() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.wake == nil {
		e.wake = make(chan struct{}, 1)
	}
	return e.wake
}

// Fresh returns once the latest snapshot is at most FreshAge old, asking
// the Sampler for one if it is not, or when ctx ends. Concurrent scrapes
// share one read: they all wait for the same next snapshot. Without a
// Sampler reading Wake, or while reads fail (the next attempt keeps its
// own pace), it returns at once.
func (e *Exporter) Fresh(ctx context.Context) {
	e.mu.Lock()
	if e.wake == nil || e.failing.Load() || (!e.updatedAt.IsZero() && time.Since(e.updatedAt) < FreshAge) {
		e.mu.Unlock()
		return
	}
	if e.updated == nil {
		e.updated = make(chan struct{})
	}
	updated := e.updated
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default: // a wake is pending already
	}
	select {
	case <-updated:
	case <-ctx.Done():
	}
}
