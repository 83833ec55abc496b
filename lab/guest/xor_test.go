//go:build linux

package guest

import (
	"fmt"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// TestXORHash: balance-xor over 3 slaves with 8 TCP streams to one peer.
// Under layer2 every stream hashes alike (one source and destination MAC),
// so one slave carries it all; under layer3+4 the source ports spread them.
// bondtop's per-slave tx rates must match the kernel's counters within 2%.
func TestXORHash(t *testing.T) {
	for i, policy := range []string{"layer2", "layer3+4"} {
		t.Run(policy, func(t *testing.T) {
			p := NewPair(t, 40+i, 3)
			spec := BondSpec{Mode: "balance-xor", XmitHashPolicy: policy}
			p.Root.Bond(t, p.Bond, spec, p.Slaves...)
			p.Peer.Bond(t, "pbond0", spec, p.Far...)
			p.Root.Addr(t, p.Bond, p.LocalCIDR())
			p.Peer.Addr(t, "pbond0", p.RemoteCIDR())

			bt := NewBondtop(t, time.Second, p.Bond)
			b := BondIn(t, bt.Sample(t), p.Bond)
			if !Is(b.Mode, bonding.ModeXOR) || !Is(b.XmitHashPolicy, policy) {
				t.Errorf("bondtop: mode %s policy %s, want balance-xor %s", Show(b.Mode), Show(b.XmitHashPolicy), policy)
			}
			deltas, worst, b := RateCheck(t, bt, p, 8, 42000, 3*time.Second)
			Measure(t, fmt.Sprintf("rate_error[balance-xor,%s]", policy), worst, "%")

			var total, top uint64
			busiest := 0
			for i, d := range deltas {
				total += d
				if d > top {
					top, busiest = d, i
				}
			}
			busy := 0
			for _, d := range deltas {
				if d >= total/10 {
					busy++
				}
			}
			t.Logf("kernel tx bytes per slave: %v", deltas)
			switch policy {
			case "layer2":
				if float64(top) < 0.99*float64(total) {
					t.Errorf("layer2: the busiest slave sent %d of %d bytes, want all (one MAC pair)", top, total)
				}
				// bondtop must show the same: one slave with all the share.
				if s := SlaveIn(t, b, p.Slaves[busiest]); s.ShareTx == nil || *s.ShareTx < 0.99 {
					t.Errorf("layer2: bondtop's tx share of %s is %s, the kernel's %.3f", s.Name, share(s.ShareTx), float64(top)/float64(total))
				}
			case "layer3+4":
				if busy < 2 {
					t.Errorf("layer3+4: only %d slave(s) carry >= 10%% of 8 streams: %v", busy, deltas)
				}
			}
			Capture(t, p.Bond)
		})
	}
}
