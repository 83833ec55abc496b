// Package fleet reads, from a Prometheus that scrapes bondtop exporters,
// every bond of every host: what a fleet's admin asks first ("which of my
// bonds is wrong?"), answered worst first. It owns the queries (a
// constant number per refresh, whatever the fleet's size), the client
// configuration (Prometheus' own http_config format), the list's model and
// its order. See docs/fleet.md.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/config"
)

// Defaults of Config.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultRateWindow = 2 * time.Minute
	DefaultLookback   = time.Hour
)

// Config says which Prometheus to read and how.
type Config struct {
	// URL is the Prometheus server (its HTTP API is under URL/api/v1).
	URL string
	// Match is a label selector, {job="bondtop",dc="fra1"}, that scopes
	// every query; empty for all.
	Match string
	// HTTPConfigFile is a file in Prometheus' http_config format (basic
	// auth, bearer token, TLS, proxy); empty for plain HTTP(S).
	HTTPConfigFile string
	// Timeout bounds one refresh (all its queries).
	Timeout time.Duration
	// RateWindow is the range of rate() over the byte counters; it must
	// hold at least two scrapes.
	RateWindow time.Duration
	// Detail is how much of each bond to ask for: the table needs the
	// bond's series only (then Bond.Slaves is nil), the JSON and a
	// bond's dashboard everything (DetailFull).
	Detail Detail
	// Lookback is how far back the last values of a host whose exporter
	// is down are looked for.
	Lookback time.Duration
}

// Client reads the fleet from one Prometheus.
type Client struct {
	url     string
	client  api.Client
	queries Queries
	timeout time.Duration
	detail  Detail
	// What the queries were built from, for Scoped.
	match                []Matcher
	rateWindow, lookback time.Duration
}

// ConfigError is a mistake in what configures the client (the URL, the
// selector, the http_config file), found before Prometheus is asked: the
// admin's to fix, not Prometheus' fault.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// New checks the configuration and prepares the client; it does not
// contact Prometheus yet. Its errors are *ConfigError.
func New(c Config) (*Client, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ConfigError{fmt.Errorf("--prometheus %q: give the server's URL, like http://prometheus:9090", c.URL)}
	}
	match, err := ParseSelector(c.Match)
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("--prometheus-match: %w", err)}
	}
	rt := http.DefaultTransport
	if c.HTTPConfigFile != "" {
		hc, _, err := config.LoadHTTPConfigFile(c.HTTPConfigFile)
		if err != nil {
			return nil, &ConfigError{fmt.Errorf("--prometheus.config.file: %w", err)}
		}
		rt, err = config.NewRoundTripperFromConfig(*hc, "bondtop")
		if err != nil {
			return nil, &ConfigError{fmt.Errorf("--prometheus.config.file %s: %w", c.HTTPConfigFile, err)}
		}
	}
	client, err := api.NewClient(api.Config{Address: c.URL, RoundTripper: rt})
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("--prometheus %q: %w", c.URL, err)}
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.RateWindow <= 0 {
		c.RateWindow = DefaultRateWindow
	}
	if c.Lookback <= 0 {
		c.Lookback = DefaultLookback
	}
	return &Client{url: redact(u), client: client, queries: BuildQueries(match, c.RateWindow, c.Lookback, c.Detail),
		timeout: c.Timeout, detail: c.Detail, match: match, rateWindow: c.RateWindow, lookback: c.Lookback}, nil
}

// Scoped is a client of the same Prometheus that reads one target's
// bonds (its instance and job) in full detail: a bond's dashboard.
func (c *Client) Scoped(instance, job string) *Client {
	match := append(slices.Clip(c.match), Matcher{Name: "instance", Op: "=", Value: instance}, Matcher{Name: "job", Op: "=", Value: job})
	sc := *c
	sc.match, sc.detail = match, DetailFull
	sc.queries = BuildQueries(match, c.rateWindow, c.lookback, DetailFull)
	return &sc
}

// redact is the URL as messages show it: without a password.
func redact(u *url.URL) string {
	return u.Redacted()
}

// URL is the server's address as messages name it.
func (c *Client) URL() string { return c.url }

// Queries are the PromQL a refresh sends.
func (c *Client) Queries() Queries { return c.queries }

// Read queries Prometheus once and returns the fleet, worst first. An
// error names the URL; Prometheus' warnings (partial data) go into
// Fleet.Warnings.
func (c *Client) Read(ctx context.Context) (*Fleet, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	now := time.Now()
	// All at one instant, so that the answers fit together.
	up, upWarnings, err := c.query(ctx, c.queries.Up, now)
	if err != nil {
		return nil, c.wrap(ctx, err)
	}
	qs := []string{c.queries.Gauges, c.queries.Rates}
	if down := downInstances(up); len(down) > 0 {
		qs = append(qs, c.queries.LastKnownFor(down))
	}
	answers := make([][]Series, 3)
	warnings := make([][]string, len(qs))
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Go(func() {
			answers[i], warnings[i], errs[i] = c.query(ctx, q, now)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, c.wrap(ctx, err)
		}
	}
	warnings = append(warnings, upWarnings)
	f := Assemble(up, answers[0], answers[2], answers[1])
	f.Time = now
	f.Queries = 1 + len(qs)
	f.age(now)
	if c.detail != DetailList {
		for i := range f.Bonds {
			if f.Bonds[i].Slaves == nil {
				f.Bonds[i].Slaves = []Slave{} // read: it has none
			}
		}
	}
	f.URL = c.url
	for _, w := range warnings {
		for _, s := range w {
			f.Warnings = append(f.Warnings, "prometheus: "+s)
		}
	}
	return f, nil
}

// downInstances are the instances of the targets that are down, once
// each.
func downInstances(up []Series) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range up {
		if inst := s.Labels["instance"]; s.Value == 0 && !seen[inst] {
			seen[inst] = true
			out = append(out, inst)
		}
	}
	return out
}

// wrap says what went wrong in the admin's terms, naming the server.
func (c *Client) wrap(ctx context.Context, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("prometheus at %s did not answer within %v: %w", c.url, c.timeout, err)
	}
	var apiErr *v1.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Msg
		if apiErr.Detail != "" && !strings.Contains(msg, apiErr.Detail) {
			msg += " (" + apiErr.Detail + ")"
		}
		return fmt.Errorf("prometheus at %s answered with an error: %s: %s", c.url, apiErr.Type, msg)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is said once, without a password
	}
	return fmt.Errorf("prometheus at %s: %w", c.url, err)
}
