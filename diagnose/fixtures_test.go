package diagnose

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/model"
)

// TestFixtures runs the analyzer on a tree per captured
// /proc/net/bonding file (bonding/testdata/proc: real-world captures and
// synthetic layouts) and checks the exact set of findings: the healthy
// captures must stay silent, the broken ones name their trouble.
func TestFixtures(t *testing.T) {
	want := map[string][]string{
		"8023ad-3.7.1-centos6-root":                      {IDLACPRateSlow, IDNoLinkMonitor},
		"8023ad-5.10-churned-nopartner-root":             {IDAggregator, IDChurned, IDDefaulted, IDPartnerMissing, IDLACPRateSlow},
		"8023ad-5.14-el9-nonroot":                        {},
		"8023ad-6.4-sles-bandwidth-root":                 {},
		"8023ad-6.8-healthy-root":                        {},
		"activebackup-5.14-el9-failovermac":              {},
		"activebackup-6.12-debian-speed-unknown":         {},
		"activebackup-6.8-primary-reselect":              {IDFailbackNoUpdelay},
		"balancerr-6.15rc1-miimon0":                      {IDRoundRobin, IDNoLinkMonitor},
		"synthetic-8023ad-6.1-no-active-aggregator-root": {IDNoAggregator, IDLinkDown, IDMinLinks, IDLACPRateSlow},
		"synthetic-8023ad-6.8-4slaves-root":              {},
		"synthetic-8023ad-6.8-healthy-root-crlf":         {},
		"synthetic-8023ad-6.8-tabs-spaces":               {},
		"synthetic-activebackup-5.14-ipoib":              {},
		"synthetic-activebackup-6.1-arp":                 {IDLinkDown},
		"synthetic-balancealb-4.19":                      {IDLinkDown},
		"synthetic-balancetlb-6.6":                       {IDLinkDown},
		"synthetic-balancexor-6.6-arp-ns":                {},
		"synthetic-broadcast-6.6":                        {IDLinkDown, IDHalfDuplex},
	}
	files, err := filepath.Glob("../bonding/testdata/proc/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("new fixture: add its expected findings to this table")
			}
			snap := fixtureSnapshot(t, file, nil)
			got := ids(snap.Bonds[0].Findings)
			slices.Sort(got)
			slices.Sort(w)
			if !slices.Equal(got, w) {
				for _, f := range snap.Bonds[0].Findings {
					t.Logf("%s %s: %s", f.Severity, f.ID, f.Message)
				}
				t.Errorf("findings %v, want %v", got, w)
			}
		})
	}
}

// fixtureSnapshot samples a tree holding file as bond0's procfs, with
// extra files written relative to the tree's root.
func fixtureSnapshot(t *testing.T, file string, extra map[string]string) *model.Snapshot {
	t.Helper()
	proc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{"proc/net/bonding/bond0": string(proc)}
	for k, v := range extra {
		files[k] = v
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := rootdir.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := collector.NewSampler(src, collector.Options{Analyze: NewWindow(time.Minute).Fill})
	snap, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestRoundRobinReordering: balance-rr's finding shows
// net.ipv4.tcp_reordering as the host has it, a warning at the default
// and information once raised (seed 002: tcp_reordering = 127).
func TestRoundRobinReordering(t *testing.T) {
	const fixture = "../bonding/testdata/proc/balancerr-6.15rc1-miimon0.txt"
	for _, c := range []struct {
		value string
		sev   model.Severity
		text  string
	}{
		{"3\n", Warning, "net.ipv4.tcp_reordering = 3 (the default)"},
		{"127\n", Info, "net.ipv4.tcp_reordering = 127 (raised)"},
	} {
		snap := fixtureSnapshot(t, fixture, map[string]string{"proc/sys/net/ipv4/tcp_reordering": c.value})
		if snap.Host == nil || snap.Host.TCPReordering == nil {
			t.Fatalf("host settings not read: %+v", snap.Host)
		}
		f := find(snap.Bonds[0].Findings, IDRoundRobin)
		if f == nil || f.Severity != c.sev || !strings.Contains(f.Message, c.text) {
			t.Errorf("tcp_reordering %q: %+v", c.value, f)
		}
	}
}
