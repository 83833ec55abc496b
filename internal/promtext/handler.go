package promtext

import (
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// ContentType is the media type of the text format 0.0.4, which every
// Prometheus server (and promtool, and most other scrapers) reads.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// scrapes keeps the Scrapes of past requests, with their slices and text
// buffer, for the next: a scrape every 15 s would otherwise make the same
// few tens of kilobytes of garbage each time.
var scrapes = sync.Pool{New: func() any { return new(Scrape) }}

// gzips keeps gzip writers between requests: each holds some 800 kB of
// compressor state (whatever the level: compress/flate's tables are
// arrays of fixed size), which a scrape every 15 s need not make anew
// each time while the pool still holds one.
var gzips = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}

// Handler serves the text format: for each request it calls collect with
// an empty Scrape, then writes what collect added. The body is gzipped
// when the request's Accept-Encoding prefers gzip to no encoding (a
// Prometheus server's asks for gzip); net/http sends it with a Content-Length or
// chunked, as it decides, and sends no body for HEAD. name[] parameters,
// as the Go client took them, restrict the families written to those
// named.
//
// Every method is served alike: routing (GET and HEAD only) is the
// caller's.
func Handler(collect func(*Scrape)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := scrapes.Get().(*Scrape)
		defer func() {
			s.Reset()
			scrapes.Put(s)
		}()
		if r.URL != nil {
			if names := r.URL.Query()["name[]"]; len(names) > 0 {
				s.only = make(map[string]bool, len(names))
				for _, n := range names {
					s.only[n] = true
				}
			}
		}
		collect(s)
		h := w.Header()
		h.Set("Content-Type", ContentType)
		h.Add("Vary", "Accept-Encoding")
		// A write fails when the scraper has gone (it timed out, it was
		// stopped): nothing is left to tell it, and the next scrape is a
		// new request, so the error is dropped rather than logged on
		// every scrape of an impatient client.
		if !prefersGzip(r.Header.Values("Accept-Encoding")) {
			_, _ = s.WriteTo(w)
			return
		}
		h.Set("Content-Encoding", "gzip")
		gz := gzips.Get().(*gzip.Writer)
		gz.Reset(w)
		_, _ = s.WriteTo(gz)
		_ = gz.Close()
		gz.Reset(io.Discard) // the pool keeps no reference to the response
		gzips.Put(gz)
	})
}

// prefersGzip reports whether Accept-Encoding headers ask for gzip: gzip
// (or *) is acceptable (q above 0) and weighted above no encoding
// (identity, or *, when named). This gives what the Go client's
// negotiation gave: "gzip" and "deflate, gzip, br" get gzip; "*", an
// absent header and "gzip;q=0" get the text as it is.
func prefersGzip(headers []string) bool {
	qGzip, qIdentity, qAny := -1.0, -1.0, -1.0
	for _, h := range headers {
		for part := range strings.SplitSeq(h, ",") {
			coding, params, _ := strings.Cut(part, ";")
			q := 1.0
			for p := range strings.SplitSeq(params, ";") {
				k, v, _ := strings.Cut(p, "=")
				if strings.EqualFold(strings.TrimSpace(k), "q") {
					var err error
					if q, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || q < 0 || q > 1 {
						q = 0 // not a weight: read as a refusal, the safe side
					}
				}
			}
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip":
				qGzip = q
			case "identity":
				qIdentity = q
			case "*":
				qAny = q
			}
		}
	}
	if qGzip < 0 {
		qGzip = qAny
	}
	if qIdentity < 0 {
		qIdentity = qAny
	}
	return qGzip > 0 && qGzip > qIdentity
}
