//go:build !linux

package live

import (
	"errors"

	"github.com/bondtop/bondtop/bonding"
)

// netlinkMembers has no netlink to read outside Linux.
type netlinkMembers struct{}

func (netlinkMembers) read(string, *int64, *bonding.Slave) error {
	return errors.New("member counters need Linux netlink")
}

// ReadOVS does nothing outside Linux: the live source has nothing to read.
func (s *Source) ReadOVS(string) {}
