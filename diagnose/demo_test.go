package diagnose

import (
	"slices"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/model"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// ids lists the IDs of fs.
func ids(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

func find(fs []Finding, id string) *Finding {
	for i := range fs {
		if fs[i].ID == id {
			return &fs[i]
		}
	}
	return nil
}

// TestDemoTimeline runs the demo host through its two-minute script on a
// fake clock, a sample a second, and checks the findings at the moments
// the script sets up: bond0 (802.3ad, layer2, one gateway taking most
// traffic) piles its transmit onto one slave all along; ens2f0 has no
// link at 30-60 s; ens1f1 loses its LACP partner at 90-105 s; bond1's
// primary eno1 is down at 45-75 s.
func TestDemoTimeline(t *testing.T) {
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	src := demo.New(clk.now)
	s := collector.NewSampler(src, collector.Options{Clock: clk.now, Analyze: NewWindow(0).Fill})
	at := map[int]*model.Snapshot{}
	for sec := 0; sec <= 115; sec++ {
		snap, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		at[sec] = snap
		clk.t = clk.t.Add(time.Second)
	}
	type check struct {
		sec    int
		bond   string
		want   []string // IDs that must be there
		absent []string // IDs that must not
		slaves map[string][]string
	}
	checks := []check{
		{sec: 20, bond: "bond0",
			want:   []string{IDImbalanceTx, IDHashPolicy, IDWhatIf},
			absent: []string{IDLinkDown, IDDefaulted, IDAggregator, IDLinkFlapping},
			slaves: map[string][]string{IDImbalanceTx: {"ens1f0"}, IDHashPolicy: {"ens1f0"}}},
		{sec: 20, bond: "bond1", want: []string{}, absent: []string{IDLinkDown, IDImbalanceTx, IDWhatIf}},
		{sec: 40, bond: "bond0",
			want:   []string{IDLinkDown, IDLinkFlapping, IDImbalanceTx},
			slaves: map[string][]string{IDLinkDown: {"ens2f0"}, IDLinkFlapping: {"ens2f0"}}},
		{sec: 50, bond: "bond1", want: []string{IDLinkDown}, slaves: map[string][]string{IDLinkDown: {"eno1"}}},
		{sec: 80, bond: "bond1", absent: []string{IDLinkDown}},
		{sec: 85, bond: "bond0", absent: []string{IDLinkDown, IDLinkFlapping, IDDefaulted}},
		{sec: 100, bond: "bond0",
			want:   []string{IDDefaulted, IDPartnerMissing, IDAggregator, IDChurned},
			absent: []string{IDLinkDown},
			slaves: map[string][]string{IDDefaulted: {"ens1f1"}, IDPartnerMissing: {"ens1f1"}, IDAggregator: {"ens1f1"}, IDChurned: {"ens1f1"}}},
		{sec: 115, bond: "bond0", absent: []string{IDDefaulted, IDPartnerMissing, IDAggregator}},
	}
	for _, c := range checks {
		b := at[c.sec].Bond(c.bond)
		if b == nil {
			t.Fatalf("%d s: no %s", c.sec, c.bond)
		}
		got := ids(b.Findings)
		for _, id := range c.want {
			if !slices.Contains(got, id) {
				t.Errorf("%d s %s: no %s in %v", c.sec, c.bond, id, got)
			}
		}
		for _, id := range c.absent {
			if slices.Contains(got, id) {
				t.Errorf("%d s %s: unexpected %s: %+v", c.sec, c.bond, id, *find(b.Findings, id))
			}
		}
		for id, slaves := range c.slaves {
			if f := find(b.Findings, id); f != nil && !slices.Equal(f.Slaves, slaves) {
				t.Errorf("%d s %s %s: slaves %v, want %v", c.sec, c.bond, id, f.Slaves, slaves)
			}
		}
	}
	// Every finding is complete, and the list is worst first.
	for sec, snap := range at {
		for _, b := range snap.Bonds {
			if b.Findings == nil {
				t.Fatalf("%d s %s: findings nil", sec, b.Name)
			}
			for i, f := range b.Findings {
				if f.ID == "" || f.Severity.Rank() == 0 || f.Message == "" || f.Detail == "" || f.Slaves == nil {
					t.Errorf("%d s %s: incomplete finding %+v", sec, b.Name, f)
				}
				if i > 0 && b.Findings[i-1].Severity.Rank() < f.Severity.Rank() {
					t.Errorf("%d s %s: %s before the worse %s", sec, b.Name, b.Findings[i-1].ID, f.ID)
				}
			}
		}
	}
	// The imbalance names the slave the gateway's flows hash to and its
	// share; it is critical: that slave runs at its speed.
	f := find(at[20].Bond("bond0").Findings, IDImbalanceTx)
	if f == nil || f.Severity != Critical {
		t.Fatalf("imbalance at 20 s: %+v", f)
	}
	t.Logf("20 s bond0: %s", f.Message)
	for _, f := range at[100].Bond("bond0").Findings {
		t.Logf("100 s bond0: %-8s %-22s %s", f.Severity, f.ID, f.Message)
	}
}

// TestDemoFlowTable checks the flow table the demo hands the Sampler:
// every flow placed, the per-slave sums (with the forwarded flows the
// simulated meter counts) next to the slaves' counters.
func TestDemoFlowTable(t *testing.T) {
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := collector.NewSampler(demo.New(clk.now), collector.Options{Clock: clk.now})
	var snap *model.Snapshot
	for range 5 {
		var err error
		if snap, err = s.Sample(); err != nil {
			t.Fatal(err)
		}
		clk.t = clk.t.Add(time.Second)
	}
	b := snap.Bond("bond0")
	tab := b.Flows
	if tab == nil || len(tab.Flows) != 17 || !tab.HaveRates() || tab.Unpredictable != 0 {
		t.Fatalf("flow table: %+v", tab)
	}
	for _, sl := range b.Slaves {
		if sl.Predicted == nil || sl.Predicted.TxBps == nil {
			t.Fatalf("%s: no prediction", sl.Name)
		}
		// The host's sockets and the VMs' forwarded flows (which only the
		// flow meter sees) are all the traffic: together they make the
		// slave's counters.
		forwarded := 0.0
		for _, f := range b.Measured.Flows {
			if f.IsTx() && !f.Local && f.Slave == sl.Name {
				forwarded += f.Bps
			}
		}
		if forwarded == 0 && sl.Name == "ens1f0" {
			t.Errorf("%s: no forwarded flow measured", sl.Name)
		}
		if got, want := *sl.Predicted.TxBps+forwarded, *sl.TxBps; want > 0 && (got < want*0.97 || got > want*1.03) {
			t.Errorf("%s: predicted tx %.0f + forwarded %.0f, counted %.0f", sl.Name, *sl.Predicted.TxBps, forwarded, want)
		}
	}
}
