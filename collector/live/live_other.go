//go:build !linux

package collector

import (
	"errors"
	"runtime"
)

// LiveSource reads the bonds of the running kernel. Bonding is a Linux
// driver: elsewhere NewLiveSource fails, and --root, replay and demo
// sources still work.
type LiveSource struct{}

// NewLiveSource fails outside Linux.
func NewLiveSource() (*LiveSource, error) {
	return nil, errors.New("the live source needs Linux (this is " + runtime.GOOS + "): analyse a copied /proc and /sys with --root DIR")
}

// Read implements Source; it is never reached outside Linux.
func (s *LiveSource) Read() (Reading, error) { return Reading{}, ErrNoBonding }

// Changes implements Notifier; no change is ever announced.
func (s *LiveSource) Changes() <-chan struct{} { return nil }

// Close implements Source.
func (s *LiveSource) Close() error { return nil }
