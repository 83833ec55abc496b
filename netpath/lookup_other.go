//go:build !linux

package netpath

import (
	"errors"
	"net/netip"
)

// Lookup needs Linux's routing and neighbour tables.
func Lookup(bond string, dst netip.Addr) (Path, error) {
	return Path{}, errors.New("looking up the route to a peer needs Linux (bondtop hash plans offline with --policy, --slaves and --src-mac)")
}
