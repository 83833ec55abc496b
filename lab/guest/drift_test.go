//go:build linux

package guest

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/intent"
	"github.com/bondtop/bondtop/model"
)

// driftYAML is the guest's /etc/netplan file; the bond is created with
// exactly its values.
const driftYAML = `network:
  version: 2
  ethernets:
    dut0: {}
    dut1: {}
  bonds:
    bond0:
      interfaces: [dut0, dut1]
      parameters:
        mode: 802.3ad
        lacp-rate: fast
        mii-monitor-interval: 100
        transmit-hash-policy: layer3+4
`

// TestConfigDrift: a bond built from the values of a netplan file matches
// it; then miimon is changed by hand through sysfs, and bondtop's drift
// names the option, the configured and the running value and the file's
// line; then the bond's MAC is changed, and the kernel's new LACP system
// MAC and the bond's MAC show as events and findings.
func TestConfigDrift(t *testing.T) {
	madeEtc := false
	if _, err := os.Stat("/etc"); err != nil {
		madeEtc = true
	}
	if err := os.MkdirAll("/etc/netplan", 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Other scenarios run without configuration: leave none behind.
		if madeEtc {
			os.RemoveAll("/etc")
		} else {
			os.RemoveAll("/etc/netplan")
		}
	})
	if err := os.WriteFile("/etc/netplan/01-bond.yaml", []byte(driftYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	miimonLine := 0
	for i, l := range strings.Split(driftYAML, "\n") {
		if strings.Contains(l, "mii-monitor-interval") {
			miimonLine = i + 1
		}
	}

	p := NewPair(t, 110, 2)
	spec := BondSpec{Mode: "802.3ad", LACPRate: "fast", MIIMon: 100, XmitHashPolicy: "layer3+4"}
	p.Root.Bond(t, p.Bond, spec, p.Slaves...)
	p.Peer.Bond(t, "pbond0", spec, p.Far...)

	src, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	s := collector.NewSampler(src, collector.Options{Bonds: []string{p.Bond}, History: time.Minute, Analyze: diagnose.NewWindow(0).Fill})
	sample := func() (*model.BondSample, []model.Event) {
		snap, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		return BondIn(t, snap, p.Bond), snap.Events
	}
	has := func(b *model.BondSample, id string) bool {
		for _, f := range b.Findings {
			if f.ID == id {
				return true
			}
		}
		return false
	}

	b, _ := sample()
	if b.Intended == nil || b.Intended.Source != intent.SourceNetplan || len(b.Intended.Slaves) != 2 {
		t.Fatalf("intended %+v, want netplan's bond0 over dut0, dut1", b.Intended)
	}
	if b.Drift == nil || len(b.Drift) != 0 || has(b, diagnose.IDConfigDrift) {
		t.Fatalf("a bond made from the file drifts: %+v", b.Drift)
	}

	if err := os.WriteFile("/sys/class/net/"+p.Bond+"/bonding/miimon", []byte("250"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Sysfs(t, p.Bond, "bonding/miimon"); got != "250" {
		t.Fatalf("kernel miimon %s after writing 250", got)
	}
	// A changed option is no event: the diagnosis judges the bond again
	// within a second (diagnose.reanalyzeEvery), and the snapshots
	// between carry its last findings.
	want := intent.Drift{Option: "miimon", Intended: "100", Running: "250", File: "/etc/netplan/01-bond.yaml", Line: miimonLine}
	Eventually(t, 2*time.Second, "the miimon drift", func() (bool, string) {
		b, _ = sample()
		return len(b.Drift) == 1 && b.Drift[0] == want, fmt.Sprintf("%+v, want [%+v]", b.Drift, want)
	})
	if !has(b, diagnose.IDConfigDrift) {
		t.Errorf("no %s finding: %v", diagnose.IDConfigDrift, b.Findings)
	}

	// A new MAC on the running bond: LACP's system MAC follows it at once
	// (netlink, every tick); the bond's MAC is re-read with the
	// configuration, every 5 s.
	mac, _ := net.ParseMAC("02:00:00:00:b0:0d")
	if err := p.Root.NL.LinkSetHardwareAddr(p.Root.Link(t, p.Bond), mac); err != nil {
		t.Fatal(err)
	}
	var kinds []model.EventKind
	_, evs := sample()
	time.Sleep(5200 * time.Millisecond)
	b, evs2 := sample()
	for _, e := range append(evs, evs2...) {
		kinds = append(kinds, e.Kind)
		t.Logf("event %s", e.Message)
	}
	for _, k := range []model.EventKind{model.EventLACPSystem, model.EventBondMAC} {
		found := false
		for _, got := range kinds {
			found = found || got == k
		}
		if !found {
			t.Errorf("no %s event after the MAC change (events %v)", k, kinds)
		}
	}
	for _, id := range []string{diagnose.IDBondMACChanged, diagnose.IDLACPSystemChanged} {
		if !has(b, id) {
			t.Errorf("no %s finding: %v", id, b.Findings)
		}
	}
}
