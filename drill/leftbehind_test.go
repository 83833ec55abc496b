package drill

import (
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
)

func TestWithLeftBehind(t *testing.T) {
	dir := t.TempDir()
	snap := func() *collector.Snapshot {
		return &collector.Snapshot{Bonds: []collector.BondSample{{Bond: bonding.Bond{Name: "bond0"}}, {Bond: bonding.Bond{Name: "bond1"}}}}
	}
	analyzed := 0
	analyze := WithLeftBehind(func(s *collector.Snapshot) {
		analyzed++
		s.Bonds[0].Findings = []collector.Finding{{ID: "other"}}
	}, dir)
	s := snap()
	analyze(s)
	if analyzed != 1 || len(s.Bonds[0].Findings) != 1 || len(s.Bonds[1].Findings) != 0 {
		t.Fatalf("no state file: %+v", s.Bonds)
	}
	if err := writeState(dir, &State{Bond: "bond0", Slave: "eth0", How: Down, SlaveWasUp: true, ActiveBefore: "eth0", PID: 7, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s = snap()
	analyze(s)
	f := s.Bonds[0].Findings
	if len(f) != 2 || f[0].ID != FindingLeftBehind || f[0].Severity != collector.SeverityCritical || !strings.Contains(f[0].Detail, "bondtop drill bond0 --restore") {
		t.Errorf("findings %+v", f)
	}
	if len(s.Bonds[1].Findings) != 0 {
		t.Errorf("bond1 got %+v", s.Bonds[1].Findings)
	}
}
