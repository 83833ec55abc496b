//go:build nometrics

package main

import (
	"errors"
	"io"
)

// Built with -tags nometrics: no /metrics server, and none of what it
// needs (net/http, TLS, the Prometheus Go client, the exporter toolkit) in
// the program. --listen and --web.config.file are refused at start.

// errNoMetrics says why, and how to get a build that serves metrics.
var errNoMetrics = errors.New("--listen, --web.config.file: this build of bondtop has no /metrics server (-tags nometrics); a build without that tag serves metrics")

// buildNote follows the version: what this build leaves out.
const buildNote = " (no /metrics server: -tags nometrics)"

func checkWebConfig(listen, file string) (scheme string, err error) {
	if listen != "" || file != "" {
		return "", errNoMetrics
	}
	return "http", nil
}

func startMetrics(string, string, io.Writer) (metricsServer, func(), error) {
	return nil, nil, errNoMetrics
}
