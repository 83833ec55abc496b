//go:build !linux

package main

import (
	"errors"
	"net/netip"
)

// lookupPath needs Linux's routing and neighbour tables.
func lookupPath(bond string, dst netip.Addr) (path, error) {
	return path{}, errors.New("bondtop hash BOND DEST needs Linux; plan offline with --policy, --slaves and --src-mac")
}
