//go:build !linux

package neighbors

import (
	"errors"
	"time"
)

// Listener hears nothing off Linux: packet sockets are Linux's.
type Listener struct{ *table }

// ErrNoPermission means the packet sockets need CAP_NET_RAW.
var ErrNoPermission = errors.New("listening for LLDP/CDP needs CAP_NET_RAW (run as root)")

// errUnsupported is Watch's answer off Linux.
var errUnsupported = errors.New("listening for LLDP/CDP needs Linux packet sockets")

// NewListener makes a listener that never hears anything.
func NewListener(clock func() time.Time) *Listener { return &Listener{newTable(clock)} }

// Watch fails: there are no packet sockets here.
func (l *Listener) Watch(slaves []string) error {
	if len(slaves) == 0 {
		return nil
	}
	return errUnsupported
}

// Close does nothing.
func (l *Listener) Close() error { return nil }
