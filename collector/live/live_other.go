//go:build !linux

package live

import (
	"errors"
	"runtime"

	"github.com/bondtop/bondtop/collector"
)

// Source reads the bonds of the running kernel. Bonding is a Linux
// driver: elsewhere New fails, and --root, replay and demo
// sources still work.
type Source struct{}

// New fails outside Linux.
func New() (*Source, error) {
	return nil, errors.New("the live source needs Linux (this is " + runtime.GOOS + "): analyse a copied /proc and /sys with --root DIR")
}

// Read implements collector.Source; it is never reached outside Linux.
func (s *Source) Read() (collector.Reading, error) {
	return collector.Reading{}, collector.ErrNoBonding
}

// Changes implements collector.Notifier; no change is ever announced.
func (s *Source) Changes() <-chan struct{} { return nil }

// Close implements collector.Source.
func (s *Source) Close() error { return nil }
