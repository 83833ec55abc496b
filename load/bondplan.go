package load

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/netpath"
)

// Strategy is how a test's source ports are chosen.
type Strategy uint8

// The port strategies, as the load panel cycles through them.
const (
	// Spread plans ports so the streams spread evenly over the usable
	// slaves (bondtop load --spread).
	Spread Strategy = iota
	// OneSlave plans ports so every stream leaves by one slave
	// (--slave NAME).
	OneSlave
	// FixedPorts uses Config.FirstPort, FirstPort+1, ... (--cport).
	FixedPorts
	// KernelPorts lets the kernel pick, as iperf3 does: where the streams
	// land is chance.
	KernelPorts
)

func (s Strategy) String() string {
	switch s {
	case OneSlave:
		return "one slave"
	case FixedPorts:
		return "fixed first port"
	case KernelPorts:
		return "random (kernel's ports)"
	}
	return "spread over slaves"
}

// ErrNoNeighbour means the policy hashes the next hop's MAC and the
// neighbour table has none yet: no stream can be placed.
var ErrNoNeighbour = errors.New("no neighbour entry for the next hop")

// NeedsDstMAC reports whether the policy reads the next hop's MAC for IP
// packets (layer2, layer2+3, encap2+3).
func NeedsDstMAC(p bonding.Policy) bool {
	return p == bonding.PolicyLayer2 || p == bonding.PolicyLayer23 || p == bonding.PolicyEncap23
}

// NewPlacement is the Placement of streams to dst:port over bond b, whose
// packets take pth (netpath.Lookup): the bond's own MAC and VLAN, the next
// hop's MAC, the source address. It fails when the bond's mode or policy
// is unknown, or with ErrNoNeighbour when the hash needs a MAC the host
// does not know yet (netpath.Nudge, then look the path up again).
func NewPlacement(b *bonding.Bond, k bonding.KernelVersion, pth netpath.Path, dst netip.Addr, proto Protocol, port uint16) (*Placement, error) {
	pred, err := bonding.NewPredictor(b, k)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		port = DefaultPort
	}
	p := bonding.ProtoTCP
	if proto == UDP {
		p = bonding.ProtoUDP
	}
	if NeedsDstMAC(pred.Policy) && !pth.HaveDstMAC {
		switch pred.Mode {
		case bonding.ModeXOR, bonding.Mode8023AD, bonding.ModeTLB:
			return nil, fmt.Errorf("%s hashes the next hop's MAC and %s has none yet (ping -c1 %s, then try again): %w", pred.Policy, pth.NextHop, pth.NextHop, ErrNoNeighbour)
		}
	}
	lo, hi := netpath.EphemeralPorts()
	return &Placement{
		Predictor: pred,
		Flow: bonding.Flow{SrcMAC: pth.SrcMAC, DstMAC: pth.DstMAC, VLAN: pth.VLAN, Src: pth.Src, Dst: dst,
			Proto: p, DstPort: port, L4Hash: true},
		Low: uint16(lo), High: uint16(hi),
	}, nil
}

// Apply fills cfg's source ports for Spread and OneSlave (slave names the
// slave); the other strategies need no plan.
func (p *Placement) Apply(cfg *Config, s Strategy, slave string) error {
	n := max(cfg.Streams, 1)
	var err error
	switch s {
	case Spread:
		cfg.SourcePorts, cfg.PredictedSlaves, err = p.Spread(n)
	case OneSlave:
		cfg.SourcePorts, cfg.PredictedSlaves, err = p.OnSlave(n, slave)
	}
	return err
}

// SlaveBytes reads the bond's slaves' byte counters: tx, rx.
func SlaveBytes(b *bonding.Bond) map[string][2]uint64 {
	m := make(map[string][2]uint64, len(b.Slaves))
	for _, s := range b.Slaves {
		tx, _ := s.Counters.Get(bonding.TxBytes)
		rx, _ := s.Counters.Get(bonding.RxBytes)
		m[s.Name] = [2]uint64{tx, rx}
	}
	return m
}

// SlaveDelta is what one slave moved during a test.
type SlaveDelta struct {
	Name    string `json:"name"`
	TxBytes uint64 `json:"tx_bytes"`
	RxBytes uint64 `json:"rx_bytes"`
}

// SlaveDeltas are what each slave of b moved between two SlaveBytes
// readings, in enslave order; a counter that went back (a slave
// re-enslaved) counts from zero.
func SlaveDeltas(b *bonding.Bond, before, after map[string][2]uint64) []SlaveDelta {
	var out []SlaveDelta
	for _, s := range b.Slaves {
		a, bf := after[s.Name], before[s.Name]
		d := SlaveDelta{Name: s.Name, TxBytes: a[0], RxBytes: a[1]}
		if a[0] >= bf[0] {
			d.TxBytes = a[0] - bf[0]
		}
		if a[1] >= bf[1] {
			d.RxBytes = a[1] - bf[1]
		}
		out = append(out, d)
	}
	return out
}
