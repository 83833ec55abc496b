//go:build linux

package guest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// TestModes: balance-rr, balance-tlb, balance-alb and broadcast, each over
// 2 slaves: bondtop names the mode as the kernel does and its per-slave
// rates match the kernel's counters. The peer of rr and broadcast is a
// balance-xor bond (it accepts on any slave); tlb and alb receive on one
// slave only and need a peer that learns where the bond's MAC sits, a
// bridge, as a switch would.
func TestModes(t *testing.T) {
	for i, mode := range []string{"balance-rr", "balance-tlb", "balance-alb", "broadcast"} {
		t.Run(mode, func(t *testing.T) {
			p := NewPair(t, 50+i, 2)
			p.Root.Bond(t, p.Bond, BondSpec{Mode: mode}, p.Slaves...)
			if mode == "balance-tlb" || mode == "balance-alb" {
				p.Peer.Bridge(t, "pbond0", p.Far...)
			} else {
				p.Peer.Bond(t, "pbond0", BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer3+4"}, p.Far...)
			}
			p.Root.Addr(t, p.Bond, p.LocalCIDR())
			p.Peer.Addr(t, "pbond0", p.RemoteCIDR())

			kernelMode := Sysfs(t, p.Bond, "bonding/mode")
			if kernelMode != fmt.Sprintf("%s %d", mode, slices.Index(bonding.Modes[:], mode)) {
				t.Errorf("kernel mode %q", kernelMode)
			}
			bt := NewBondtop(t, time.Second, p.Bond)
			b := BondIn(t, bt.Sample(t), p.Bond)
			if !Is(b.Mode, mode) {
				t.Errorf("bondtop mode %s, kernel %s", Show(b.Mode), kernelMode)
			}
			if b.LACP != nil {
				t.Errorf("bondtop shows an LACP section outside 802.3ad: %+v", b.LACP)
			}
			if len(b.Slaves) != 2 || !Is(b.MIIStatus, "up") {
				t.Errorf("bondtop: %d slaves, MII %s", len(b.Slaves), Show(b.MIIStatus))
			}
			deltas, worst, _ := RateCheck(t, bt, p, 4, 43000, 2*time.Second)
			Measure(t, fmt.Sprintf("rate_error[%s]", mode), worst, "%")
			t.Logf("kernel tx bytes per slave: %v", deltas)
			switch mode {
			case "balance-rr":
				// Packets alternate: both slaves carry about half.
				if lo, hi := min(deltas[0], deltas[1]), max(deltas[0], deltas[1]); float64(lo) < 0.3*float64(hi) {
					t.Errorf("balance-rr: slaves sent %v, want about equal", deltas)
				}
			case "broadcast":
				// Every frame leaves on every slave.
				if lo, hi := min(deltas[0], deltas[1]), max(deltas[0], deltas[1]); float64(lo) < 0.95*float64(hi) {
					t.Errorf("broadcast: slaves sent %v, want the same", deltas)
				}
			}
			Capture(t, p.Bond)
		})
	}
}
