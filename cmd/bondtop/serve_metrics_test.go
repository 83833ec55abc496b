//go:build !nometrics

package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/metrics"
)

// The exporter's paths: a landing page that links to the metrics, a
// health check, the metrics for GET and HEAD only, and 404 elsewhere.
func TestMetricsMux(t *testing.T) {
	srv := httptest.NewServer(metricsMux(metrics.New().Handler(nil)))
	defer srv.Close()
	do := func(method, path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	resp, body := do("GET", "/")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, `<a href="/metrics">`) {
		t.Errorf("GET /: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp, body := do("GET", "/-/healthy"); resp.StatusCode != 200 || strings.TrimSpace(body) != "OK" {
		t.Errorf("GET /-/healthy: %d %q", resp.StatusCode, body)
	}
	if resp, body := do("GET", "/metrics"); resp.StatusCode != 200 || !strings.Contains(body, "bondtop_build_info") {
		t.Errorf("GET /metrics: %d\n%s", resp.StatusCode, body)
	}
	if resp, body := do("HEAD", "/metrics"); resp.StatusCode != 200 || body != "" {
		t.Errorf("HEAD /metrics: %d %q", resp.StatusCode, body)
	}
	for _, method := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		resp, _ := do(method, "/metrics")
		if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(resp.Header.Get("Allow"), "GET") {
			t.Errorf("%s /metrics: %d, Allow %q; want 405 naming GET", method, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	if resp, _ := do("POST", "/"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", resp.StatusCode)
	}
	if resp, _ := do("GET", "/nothing"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nothing: %d", resp.StatusCode)
	}
}
