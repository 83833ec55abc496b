package diagnose

import (
	"slices"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/model"
)

// TestDemoSwitchFaults: the demo shows its two switch-side faults — bond1's
// access switch takes standard frames under a 9000 MTU all along, and
// ens1f1's partner falls silent at 90 s of the script — and not before.
func TestDemoSwitchFaults(t *testing.T) {
	now := time.Unix(1_699_999_800, 0) // the script's start: a whole five minutes
	clock := func() time.Time { return now }
	src := demo.New(clock)
	w := NewWindow(0)
	s := collector.NewSampler(src, collector.Options{Clock: clock, Analyze: w.Fill})
	has := func(snap *model.Snapshot, bond, id string) []string {
		for _, f := range snap.Bond(bond).Findings {
			if f.ID == id {
				return f.Slaves
			}
		}
		return nil
	}
	for sec := 0; sec <= 100; sec++ {
		snap, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		if got := has(snap, "bond1", IDSwitchFrameSize); !slices.Equal(got, []string{"eno1", "eno2"}) {
			t.Fatalf("%d s: bond1 frame size finding names %v", sec, got)
		}
		silent := has(snap, "bond0", IDLACPDUSilent)
		switch {
		case sec < 94 && silent != nil:
			t.Fatalf("%d s: LACPDU silence on %v before the partner stopped", sec, silent)
		case sec >= 94 && !slices.Equal(silent, []string{"ens1f1"}):
			t.Fatalf("%d s: LACPDU silence names %v, want ens1f1", sec, silent)
		}
		for _, b := range snap.Bonds {
			if b.IsOVS() {
				continue // the demo scripts carrier and LACPDU counts for its Linux bonds only
			}
			for _, sl := range b.Slaves {
				if sl.SwitchSide == nil || sl.Neighbor == nil || sl.Carrier == nil {
					t.Fatalf("%d s: %s shows no switch side", sec, sl.Name)
				}
			}
		}
		now = now.Add(time.Second)
	}
}
