//go:build nometrics

package main

import (
	"errors"
	"io"
)

// Built with -tags nometrics: no Prometheus client, so no fleet view.

// errNoFleet says why, and how to get a build that reads Prometheus.
var errNoFleet = errors.New("--prometheus: this build of bondtop has no Prometheus client (-tags nometrics); a build without that tag reads the fleet from Prometheus")

func fleetSupported() error { return errNoFleet }

func runFleet(options, io.Writer) error { return errNoFleet }
