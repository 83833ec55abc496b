package load

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/loopback"
)

func testPlacement(t *testing.T, policy bonding.Policy, slaves ...string) *Placement {
	t.Helper()
	k, err := bonding.ParseKernelVersion("6.1")
	if err != nil {
		t.Fatal(err)
	}
	return &Placement{
		Predictor: &bonding.Predictor{Mode: bonding.Mode8023AD, Policy: policy, Kernel: k, Usable: slaves},
		Flow: bonding.Flow{SrcMAC: [6]byte{2, 0, 0, 0, 0, 1}, DstMAC: [6]byte{2, 0, 0, 0, 0, 2},
			Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"),
			Proto: bonding.ProtoTCP, DstPort: 5201, L4Hash: true},
		Rand: rand.New(rand.NewPCG(1, 2)),
	}
}

// Every candidate port of every stream lands where the plan says, and a
// spread puts the same number of streams on each slave (±1).
func TestPlacementSpread(t *testing.T) {
	for _, n := range []int{2, 4, 5, 8} {
		for _, slaves := range [][]string{{"eth0", "eth1"}, {"eth0", "eth1", "eth2", "eth3"}} {
			p := testPlacement(t, bonding.PolicyLayer34, slaves...)
			ports, targets, err := p.Spread(n)
			if err != nil {
				t.Fatal(err)
			}
			count := map[string]int{}
			seen := map[uint16]bool{}
			for i, cands := range ports {
				count[targets[i]]++
				if len(cands) != candidatesPerStream {
					t.Errorf("stream %d: %d candidates", i, len(cands))
				}
				for _, port := range cands {
					if got, _ := p.Predict(port); got != targets[i] {
						t.Errorf("stream %d: port %d goes to %s, planned %s", i, port, got, targets[i])
					}
					if seen[port] {
						t.Errorf("port %d planned twice", port)
					}
					seen[port] = true
				}
			}
			lo, hi := n, 0
			for _, s := range slaves {
				lo, hi = min(lo, count[s]), max(hi, count[s])
			}
			if hi-lo > 1 {
				t.Errorf("%d streams over %v: %v", n, slaves, count)
			}
		}
	}
}

func TestPlacementOnSlave(t *testing.T) {
	p := testPlacement(t, bonding.PolicyLayer34, "eth0", "eth1", "eth2")
	ports, targets, err := p.OnSlave(4, "eth2")
	if err != nil {
		t.Fatal(err)
	}
	for i, cands := range ports {
		for _, port := range cands {
			if got, _ := p.Predict(port); got != "eth2" || targets[i] != "eth2" {
				t.Errorf("port %d goes to %s", port, got)
			}
		}
	}
	if _, _, err := p.OnSlave(1, "eth9"); err == nil {
		t.Error("OnSlave(eth9): no error for a slave that is not usable")
	}
}

// layer2+3 ignores ports: placement says so instead of pretending.
func TestPlacementPolicyWithoutPorts(t *testing.T) {
	p := testPlacement(t, bonding.PolicyLayer23, "eth0", "eth1")
	if _, _, err := p.Spread(2); err == nil {
		t.Error("Spread under layer2+3: no error")
	}
	p = testPlacement(t, bonding.PolicyEncap34, "eth0", "eth1")
	if _, _, err := p.Spread(2); err == nil {
		t.Error("Spread under encap3+4 with a socket hash: no error")
	}
}

// The client binds the planned ports: each stream reports its planned
// port and slave.
func TestClientUsesPlannedPorts(t *testing.T) {
	port := startServer(t, &Server{})
	p := testPlacement(t, bonding.PolicyLayer34, "eth0", "eth1")
	p.Flow.Src, p.Flow.Dst, p.Flow.DstPort = netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.1"), port
	ports, slaves, err := p.Spread(4)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := runClient(t, Config{Target: "127.0.0.1", Port: port, Streams: 4, Duration: 1e9,
		Source: netip.MustParseAddr("127.0.0.1"), SourcePorts: ports, PredictedSlaves: slaves})
	for i, s := range sum.Streams {
		if got, _ := p.Predict(s.SourcePort); got != slaves[i] || s.PredictedSlave != slaves[i] {
			t.Errorf("stream %d: port %d goes to %s; reported %s, planned %s", s.ID, s.SourcePort, got, s.PredictedSlave, slaves[i])
		}
	}
	// --cport: consecutive ports.
	first := uint16(loopback.FreeRun(t, 2))
	sum, _ = runClient(t, Config{Target: "127.0.0.1", Port: port, Streams: 2, Duration: 1e9, FirstPort: first})
	for i, s := range sum.Streams {
		if s.SourcePort != first+uint16(i) {
			t.Errorf("stream %d: source port %d, want %d", s.ID, s.SourcePort, first+uint16(i))
		}
	}
}
