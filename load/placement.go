package load

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/bondtop/bondtop/bonding"
)

// candidatesPerStream is how many ports are planned per stream: a port
// may be taken, or in TIME_WAIT towards the same server, and each
// alternative lands on the same slave.
const candidatesPerStream = 8

// Placement chooses source ports so that the bond's transmit hash puts
// each stream on a chosen slave. The hash (bonding.Predictor) sees the
// whole flow, so Flow must be the streams' own: this host's address and
// the bond's MAC, the next hop's MAC, the VLAN, the server's address and
// port, and the protocol. Its SrcPort is what Placement varies.
type Placement struct {
	Predictor *bonding.Predictor
	Flow      bonding.Flow
	// Low and High bound the ports to choose from (32768-60999, Linux's
	// default ephemeral range, when zero).
	Low, High uint16
	// Rand picks where the search starts (a fresh source when nil), so
	// two tests in a row do not collide on TIME_WAIT ports.
	Rand *rand.Rand
}

// Predict says which slave a stream from source port sport leaves by, or
// why no slave can be named.
func (p *Placement) Predict(sport uint16) (string, error) {
	f := p.Flow
	f.SrcPort = sport
	c, err := p.Predictor.Predict(&f)
	if err != nil {
		return "", err
	}
	switch c.Outcome {
	case bonding.Hashed, bonding.Active:
		return c.Slave, nil
	}
	return "", errors.New(c.Reason)
}

// Spread plans n streams evenly over the usable slaves: stream i on
// usable slave i mod count, so no slave has more than one stream more
// than another.
func (p *Placement) Spread(n int) (ports [][]uint16, slaves []string, err error) {
	if err := p.hashes(); err != nil {
		return nil, nil, err
	}
	usable := p.Predictor.Usable
	targets := make([]string, n)
	for i := range targets {
		targets[i] = usable[i%len(usable)]
	}
	ports, err = p.plan(targets)
	return ports, targets, err
}

// OnSlave plans n streams all on slave, for a test of one link.
func (p *Placement) OnSlave(n int, slave string) (ports [][]uint16, slaves []string, err error) {
	usable := p.Predictor.Usable
	if !slices.Contains(usable, slave) {
		return nil, nil, fmt.Errorf("slave %s cannot transmit now (usable: %s)", slave, orNone(usable))
	}
	targets := make([]string, n)
	for i := range targets {
		targets[i] = slave
	}
	if err := p.hashes(); err != nil {
		// Active-backup and the like: every port goes to the active
		// slave, so the plan is the kernel's choice if that is slave.
		if s, perr := p.Predict(0); perr == nil && s == slave {
			return make([][]uint16, n), targets, nil
		}
		return nil, nil, err
	}
	ports, err = p.plan(targets)
	return ports, targets, err
}

// hashes checks that the source port decides the slave.
func (p *Placement) hashes() error {
	f := p.Flow
	c, err := p.Predictor.Predict(&f)
	if err != nil {
		return err
	}
	switch c.Outcome {
	case bonding.Hashed:
	case bonding.Active:
		return fmt.Errorf("mode %s sends everything on %s: the source port cannot choose a slave", p.Predictor.Mode, c.Slave)
	default:
		return fmt.Errorf("the source port cannot choose a slave: %s", c.Reason)
	}
	if len(p.Predictor.Usable) < 2 {
		return nil
	}
	// layer2 and layer2+3 ignore ports: every port gives the same slave.
	first := c.Slave
	for sport := uint16(1024); sport < 1024+256; sport++ {
		if s, _ := p.Predict(sport); s != first {
			return nil
		}
	}
	return fmt.Errorf("xmit_hash_policy %s does not hash ports: every stream to this peer leaves by %s (layer3+4 or encap3+4 spread by port)", p.Predictor.Policy, first)
}

// plan finds candidatesPerStream ports for each target slave, each port
// used once, searching the range from a random start.
func (p *Placement) plan(targets []string) ([][]uint16, error) {
	lo, hi := int(p.Low), int(p.High)
	if lo == 0 || hi == 0 || lo > hi {
		lo, hi = 32768, 60999
	}
	span := hi - lo + 1
	r := p.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	start := r.IntN(span)
	// Streams per slave still wanting candidates, in stream order.
	want := make(map[string][]int)
	for i, s := range targets {
		want[s] = append(want[s], i)
	}
	ports := make([][]uint16, len(targets))
	left := len(targets) * candidatesPerStream
	for k := 0; k < span && left > 0; k++ {
		sport := uint16(lo + (start+k)%span)
		s, err := p.Predict(sport)
		if err != nil {
			return nil, err
		}
		idx := want[s]
		if len(idx) == 0 {
			continue
		}
		// Round robin within the slave, so every stream gets a first
		// candidate before any gets a second.
		i := idx[0]
		ports[i] = append(ports[i], sport)
		left--
		if len(ports[i]) == candidatesPerStream {
			want[s] = idx[1:]
		} else {
			want[s] = append(idx[1:], i)
		}
	}
	for i, c := range ports {
		if len(c) == 0 {
			return nil, fmt.Errorf("no source port in %d-%d puts stream %d on %s", lo, hi, i+1, targets[i])
		}
	}
	return ports, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
