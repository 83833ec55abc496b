//go:build !linux

package drill

import (
	"context"
	"errors"
)

var errLinux = errors.New("the failover drill needs Linux's bonding driver")

// Prepare needs Linux.
func Prepare(context.Context, Options) (*Drill, error) { return nil, errLinux }

// Run needs Linux.
func (d *Drill) Run(context.Context, func(string)) (*Result, error) { return nil, errLinux }

// Restore needs Linux.
func Restore(string, string) (*State, error) { return nil, errLinux }
