//go:build linux

package guest

import (
	"fmt"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/rootdir"
)

// TestRootOnTheRunningKernel: --root / reads the running kernel's procfs
// and sysfs, keeping the statistics files open once their directories
// have been quiet a while. A bond deleted and created again with another
// mode must be seen as it is now: a kept descriptor of the old bond's
// files must never stand in for the new one's.
func TestRootOnTheRunningKernel(t *testing.T) {
	p := NewPair(t, 61, 2)
	p.Root.Bond(t, p.Bond, BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer3+4"}, p.Slaves...)
	src, err := rootdir.New("/")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	seen := func() string {
		r, err := src.Read()
		if err != nil {
			t.Fatal(err)
		}
		b := r.Bond(p.Bond)
		if b == nil {
			return "no " + p.Bond
		}
		_, haveCounters := b.Counters.Get(bonding.RxPackets)
		return fmt.Sprintf("mode %s, active %s, %d slaves, counters %v, warnings %q", Show(b.Mode), Show(b.ActiveSlave), len(b.Slaves), haveCounters, r.Warnings)
	}
	// Past the quiet second the directories need before their files are
	// kept open, reading every 100 ms as the dashboard does.
	for range 15 {
		seen()
		time.Sleep(100 * time.Millisecond)
	}
	if got, want := seen(), "mode balance-xor, active null, 2 slaves, counters true, warnings []"; got != want {
		t.Fatalf("--root / before: %s, want %s", got, want)
	}

	p.Root.Delete(t, p.Bond)
	p.Root.Bond(t, p.Bond, BondSpec{Mode: "active-backup", Primary: p.Slaves[1]}, p.Slaves...)
	want := "mode active-backup, active " + p.Slaves[1] + ", 2 slaves, counters true, warnings []"
	took := Eventually(t, 3*time.Second, "--root / showing the re-created bond ("+want+")", func() (bool, string) {
		s := seen()
		time.Sleep(100 * time.Millisecond)
		return s == want, s
	})
	Measure(t, "root_recreated_seen", float64(took.Milliseconds()), "ms")
}
