package metrics

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/model"
)

// fixtureSnapshot samples a real-kernel fixture tree of testdata/lab twice
// (rates need two), with bondtop's diagnosis, as --root does.
func fixtureSnapshot(t *testing.T, name string) *model.Snapshot {
	t.Helper()
	src, err := rootdir.New("../testdata/lab/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	now := time.Unix(1_700_000_100, 0) // a whole five minutes: the demo script's start
	s := collector.NewSampler(src, collector.Options{Clock: func() time.Time { return now }, Analyze: diagnose.NewWindow(0).Fill})
	var snap *model.Snapshot
	for range 2 {
		if snap, err = s.Sample(); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	return snap
}

// The exporter says which build runs, when it last read the host and how
// its reads failed, also while they fail.
func TestHealthMetrics(t *testing.T) {
	e := New(Version("v9.9.9"))
	fams := scrape(t, e)
	if got := find(t, fams, "bondtop_build_info", map[string]string{"version": "v9.9.9", "goversion": runtime.Version()}); got != 1 {
		t.Errorf("build_info %v", got)
	}
	for _, kind := range []string{"read", "no_bonding_driver", "partial"} {
		if got := find(t, fams, "bondtop_sample_errors_total", map[string]string{"kind": kind}); got != 0 {
			t.Errorf("%s errors %v before any sample", kind, got)
		}
	}
	if fams["bondtop_last_sample_timestamp_seconds"] != nil {
		t.Error("a last sample time before any sample")
	}

	snap := fixtureSnapshot(t, "ActiveBackupFailover")
	e.Update(snap)
	fams = scrape(t, e)
	if got := find(t, fams, "bondtop_last_sample_timestamp_seconds", nil); got != float64(snap.Time.Unix()) {
		t.Errorf("last sample %v, snapshot at %v", got, snap.Time.Unix())
	}
	if got := find(t, fams, "bondtop_bonds", nil); got != 1 {
		t.Errorf("bonds %v", got)
	}

	e.ReadFailed()
	fams = scrape(t, e)
	if got := find(t, fams, "bondtop_sample_errors_total", map[string]string{"kind": "read"}); got != 1 {
		t.Errorf("read errors %v after a failed read", got)
	}
	if got := find(t, fams, "bondtop_last_sample_timestamp_seconds", nil); got != float64(snap.Time.Unix()) {
		t.Errorf("last sample %v while failing: the time of the last good one is what tells its age", got)
	}
	if fams["bondtop_bonds"] != nil {
		t.Error("bondtop_bonds served while reads fail")
	}

	// The driver unloaded under a running sampler (a field capture's
	// tree, then its /proc/net/bonding removed): it goes on with an empty
	// reading that carries the error as a warning.
	root := fixtureRoot(t, "8023ad-6.8-healthy-root")
	src, err := rootdir.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sampler := collector.NewSampler(src, collector.Options{})
	if _, err := sampler.Sample(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "proc/net/bonding")); err != nil {
		t.Fatal(err)
	}
	gone, err := sampler.Sample()
	if err != nil {
		t.Fatal(err)
	}
	e.Update(gone)
	e.Update(&model.Snapshot{Time: gone.Time, Warnings: []string{"/proc/net/dev: permission denied"}, ReadWarnings: 1})
	// A warning about the configuration or the flow table is no sample error.
	e.Update(&model.Snapshot{Time: gone.Time, Warnings: []string{"flow table: 3 sockets not routed yet"}})
	fams = scrape(t, e)
	if got := find(t, fams, "bondtop_sample_errors_total", map[string]string{"kind": "no_bonding_driver"}); got != 1 {
		t.Errorf("no_bonding_driver %v", got)
	}
	if got := find(t, fams, "bondtop_sample_errors_total", map[string]string{"kind": "partial"}); got != 1 {
		t.Errorf("partial %v", got)
	}
	if got := find(t, fams, "bondtop_bonds", nil); got != 0 {
		t.Errorf("bonds %v with the driver gone", got)
	}
	// bond0 was seen, though nobody named it on the command line.
	if got := find(t, fams, "bondtop_bond_present", map[string]string{"bond": "bond0"}); got != 0 {
		t.Errorf("bond0 present = %v after it vanished", got)
	}
}

// Settings and the usable-slave count come from the snapshot of a real
// kernel: an active-backup bond that lost its primary's link, and an
// 802.3ad bond with a slave outside the active aggregator.
func TestSettingsMetrics(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		usable  float64
	}{{"ActiveBackupFailover", 1}, {"LACPUnpartnered", 2}, {"LACP_slaves-4", 4}} {
		t.Run(tc.fixture, func(t *testing.T) {
			snap := fixtureSnapshot(t, tc.fixture)
			e := New()
			e.Update(snap)
			fams := scrape(t, e)
			b := &snap.Bonds[0]
			bl := map[string]string{"bond": b.Name}
			if got := find(t, fams, "bondtop_bond_miimon_seconds", bl); got != float64(*b.MIIMonMs)/1000 {
				t.Errorf("miimon %v s, snapshot %d ms", got, *b.MIIMonMs)
			}
			if got := find(t, fams, "bondtop_bond_mtu_bytes", bl); got != float64(*b.MTU) {
				t.Errorf("mtu %v, snapshot %d", got, *b.MTU)
			}
			find(t, fams, "bondtop_bond_settings_info", map[string]string{"bond": b.Name, "primary": str(b.Primary), "fail_over_mac": str(b.FailOverMAC)})
			if got := find(t, fams, "bondtop_bond_slaves_usable", bl); got != tc.usable {
				t.Errorf("usable slaves %v, want %v", got, tc.usable)
			}
			if b.LACP != nil {
				if got := find(t, fams, "bondtop_bond_min_links", bl); got != float64(*b.LACP.MinLinks) {
					t.Errorf("min_links %v", got)
				}
			}
			for _, s := range b.Slaves {
				if got := find(t, fams, "bondtop_slave_mtu_bytes", map[string]string{"bond": b.Name, "slave": s.Name}); got != float64(*s.MTU) {
					t.Errorf("%s mtu %v", s.Name, got)
				}
			}
		})
	}
}

// A reader without root says so: the partner series are missing, and a
// rule on them cannot fire.
func TestLACPDetailsReadable(t *testing.T) {
	for fixture, want := range map[string]float64{"8023ad-5.14-el9-nonroot": 0, "8023ad-6.8-healthy-root": 1, "LACPUnpartnered": 1} {
		if got := scrapeFixture(t, fixture)[`{__name__="bondtop_lacp_details_readable"}`]; got != want {
			t.Errorf("%s: lacp_details_readable %v, want %v", fixture, got, want)
		}
	}
}

// Every finding of the diagnosis is a series, once per slave it names.
func TestFindingMetrics(t *testing.T) {
	for _, fixture := range []string{"LACPUnpartnered", "ActiveBackupFailover", "Modes_balance-rr"} {
		t.Run(fixture, func(t *testing.T) {
			snap := fixtureSnapshot(t, fixture)
			e := New()
			e.Update(snap)
			fams := scrape(t, e)
			want := 0
			for _, b := range snap.Bonds {
				if len(b.Findings) == 0 {
					t.Fatalf("%s: no findings to export; the fixture was chosen for them", b.Name)
				}
				for _, f := range b.Findings {
					slaves := f.Slaves
					if len(slaves) == 0 {
						slaves = []string{""}
					}
					for _, s := range slaves {
						want++
						if got := find(t, fams, "bondtop_finding", map[string]string{"bond": b.Name, "id": f.ID, "severity": string(f.Severity), "slave": s}); got != 1 {
							t.Errorf("%s/%s: %v", f.ID, s, got)
						}
					}
				}
			}
			if got := len(fams["bondtop_finding"].GetMetric()); got != want {
				t.Errorf("%d finding series, want %d", got, want)
			}
		})
	}
}

// A finding that names a slave twice still makes one series: a duplicate
// would cost the whole scrape.
func TestFindingDuplicateSlave(t *testing.T) {
	up := "up"
	snap := &model.Snapshot{Bonds: []model.BondSample{{Bond: bonding.Bond{Name: "bond0", MIIStatus: &up},
		Findings: []model.Finding{{ID: "link-down", Severity: model.SeverityWarning, Slaves: []string{"eth0", "eth0"}}}}}}
	e := New()
	e.Update(snap)
	if got := len(scrape(t, e)["bondtop_finding"].GetMetric()); got != 1 {
		t.Fatalf("%d series", got)
	}
}
