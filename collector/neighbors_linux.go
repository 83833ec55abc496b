package collector

import (
	"runtime"

	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/vishvananda/netns"
)

var _ NeighborReader = (*LiveSource)(nil)

// Watch implements NeighborReader: packet sockets on the slaves, opened
// in the namespace the source watches (the sampler's thread may sit in
// another one).
func (s *LiveSource) Watch(slaves []string) error {
	if !s.ns.IsOpen() || inNetns(s.ns) {
		return s.nb.Watch(slaves)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return err
	}
	defer orig.Close()
	if err := netns.Set(s.ns); err != nil {
		return err
	}
	// Back to where the thread was before it is unlocked, so no other
	// goroutine runs in the watched namespace by accident.
	defer netns.Set(orig)
	return s.nb.Watch(slaves)
}

// Neighbor implements NeighborReader.
func (s *LiveSource) Neighbor(slave string) *neighbors.Neighbor { return s.nb.Neighbor(slave) }
