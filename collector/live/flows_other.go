//go:build !linux

package live

import (
	"errors"
	"runtime"

	"github.com/bondtop/bondtop/collector"
)

// Flows reads this host's flows; sock_diag is Linux's.
type Flows struct{}

// NewFlows fails outside Linux.
func NewFlows() (*Flows, error) {
	return nil, errors.New("the flow table needs Linux (this is " + runtime.GOOS + ")")
}

// ReadFlows implements collector.FlowReader; it is never reached outside Linux.
func (f *Flows) ReadFlows() (collector.FlowReading, error) {
	return collector.FlowReading{}, errors.New("no flow table")
}

// Close implements io.Closer.
func (f *Flows) Close() error { return nil }
