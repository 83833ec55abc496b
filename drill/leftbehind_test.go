package drill

import (
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

func TestWithLeftBehind(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_700_000_000, 0)
	// Snapshots 100 ms apart: the state files are looked for once a
	// second of them.
	snap := func() *model.Snapshot {
		now = now.Add(100 * time.Millisecond)
		return &model.Snapshot{Time: now, Bonds: []model.BondSample{{Bond: bonding.Bond{Name: "bond0"}}, {Bond: bonding.Bond{Name: "bond1"}}}}
	}
	analyzed := 0
	analyze := WithLeftBehind(func(s *model.Snapshot) {
		analyzed++
		s.Bonds[0].Findings = []model.Finding{{ID: "other"}}
	}, dir)
	s := snap()
	analyze(s)
	if analyzed != 1 || len(s.Bonds[0].Findings) != 1 || len(s.Bonds[1].Findings) != 0 {
		t.Fatalf("no state file: %+v", s.Bonds)
	}
	if err := writeState(dir, &State{Bond: "bond0", Slave: "eth0", How: Down, SlaveWasUp: true, ActiveBefore: "eth0", PID: 7, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// Within the second of the last look, the file is not seen yet.
	s = snap()
	analyze(s)
	if len(s.Bonds[0].Findings) != 1 {
		t.Fatalf("state file seen before a second passed: %+v", s.Bonds[0].Findings)
	}
	for range 9 {
		s = snap()
		analyze(s)
	}
	f := s.Bonds[0].Findings
	if len(f) != 2 || f[0].ID != FindingLeftBehind || f[0].Severity != model.SeverityCritical || !strings.Contains(f[0].Detail, "bondtop drill bond0 --restore") {
		t.Errorf("findings %+v", f)
	}
	if len(s.Bonds[1].Findings) != 0 {
		t.Errorf("bond1 got %+v", s.Bonds[1].Findings)
	}
	// Carried until the next look, and gone at the first look after the
	// file went.
	s = snap()
	analyze(s)
	if f := s.Bonds[0].Findings; len(f) != 2 || f[0].ID != FindingLeftBehind {
		t.Errorf("between two looks: findings %+v", f)
	}
	if err := removeState(dir, "bond0"); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		s = snap()
		analyze(s)
	}
	if f := s.Bonds[0].Findings; len(f) != 1 {
		t.Errorf("a second after the state file went: findings %+v", f)
	}
}

// TestWithLeftBehindAllocs: without state files, a second of snapshots at
// 100 ms allocates only for the one look (a failed open per bond), not
// on every snapshot.
func TestWithLeftBehindAllocs(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := &model.Snapshot{Bonds: []model.BondSample{{Bond: bonding.Bond{Name: "bond0"}}}}
	analyze := WithLeftBehind(nil, t.TempDir())
	tick := func() {
		now = now.Add(100 * time.Millisecond)
		s.Time = now
		analyze(s)
	}
	tick() // the first look
	// AllocsPerRun runs once to warm up (ticks 2-11, looking at the 11th)
	// and once measured (12-21, looking at the 21st).
	look := testing.AllocsPerRun(1, func() {
		for range 10 {
			tick()
		}
	})
	if look == 0 || look > 8 {
		t.Errorf("%v allocations in a second of snapshots, want those of one look (1 to 8)", look)
	}
	// The last look was the last tick: AllocsPerRun's warm-up run and its
	// measured one, three ticks each, both fall before the next.
	between := testing.AllocsPerRun(1, func() {
		for range 3 {
			tick()
		}
	})
	if between != 0 {
		t.Errorf("%v allocations between two looks, want none", between)
	}
}
