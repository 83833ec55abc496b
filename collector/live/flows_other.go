//go:build !linux

package collector

import (
	"errors"
	"runtime"
)

// LiveFlows reads this host's flows; sock_diag is Linux's.
type LiveFlows struct{}

// NewLiveFlows fails outside Linux.
func NewLiveFlows() (*LiveFlows, error) {
	return nil, errors.New("the flow table needs Linux (this is " + runtime.GOOS + ")")
}

// ReadFlows implements FlowReader; it is never reached outside Linux.
func (f *LiveFlows) ReadFlows() (FlowReading, error) {
	return FlowReading{}, errors.New("no flow table")
}

// Close implements io.Closer.
func (f *LiveFlows) Close() error { return nil }
