package live

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ovs"
)

// fixtureOVS serves the OVS bonds captured from the real OVS in
// ovs.TestRealOVS, with member links read by fakeLinks.
func fixtureOVS(t *testing.T) *ovs.Host {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "ovs", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	h, err := ovs.HostFromReplies(json.RawMessage(read("transact.json")), read("bond-show.txt"), read("lacp-show.txt"), read("lacp-show-stats.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestFromOVSFixture(t *testing.T) {
	h := fixtureOVS(t)
	a := model.FromOVS(h.Bond("bond-a"))
	if a.Kind != bonding.KindOVS || str(a.Bridge) != "br-a" || str(a.Mode) != "balance-tcp" || !a.Is8023AD() {
		t.Fatalf("bond-a: kind %q bridge %v mode %v", a.Kind, a.Bridge, a.Mode)
	}
	if a.LACP == nil || str(a.LACP.PartnerMAC) != h.Bond("bond-b").SysID || a.LACP.NumPorts == nil || *a.LACP.NumPorts != 3 {
		t.Errorf("bond-a LACP %+v", a.LACP)
	}
	for _, s := range a.Slaves {
		if str(s.State) != "active" || s.Actor == nil || s.Partner == nil || !s.Partner.PortState.Has(bonding.StateDistributing) {
			t.Errorf("%s: state %v actor %+v partner %+v", s.Name, s.State, s.Actor, s.Partner)
		}
	}
	c := model.FromOVS(h.Bond("ab-c"))
	if c.LACP != nil || c.Is8023AD() || str(c.ActiveSlave) == "" {
		t.Errorf("ab-c: LACP %+v active %v", c.LACP, c.ActiveSlave)
	}
	active := 0
	for _, s := range c.Slaves {
		if str(s.State) == "active" {
			active++
			if s.Name != str(c.ActiveSlave) {
				t.Errorf("ab-c: %s active, the active member is %s", s.Name, str(c.ActiveSlave))
			}
		}
	}
	if active != 1 {
		t.Errorf("ab-c: %d active members", active)
	}
}

type fakeLinks map[string]uint64 // tx bytes by member; absent: no kernel link

func (f fakeLinks) read(name string, _ *int64, s *bonding.Slave) error {
	v, ok := f[name]
	if !ok {
		return errors.New("no such link")
	}
	s.Counters.Set(bonding.TxBytes, v)
	return nil
}

func TestOVSCountersFallBack(t *testing.T) {
	h := fixtureOVS(t)
	b := model.FromOVS(h.Bond("bond-a"))
	warnings := readMembers(fakeLinks{"a0": 100, "a1": 200}, h.Bond("bond-a"), &b)
	a2, _ := b.Slaves[2].Counters.Get(bonding.TxBytes)
	if want := h.Bond("bond-a").Members[2].Statistics["tx_bytes"]; a2 != uint64(want) || len(warnings) != 0 {
		t.Errorf("a2 tx %d, OVSDB says %d; warnings %v", a2, want, warnings)
	}
	if sum, _ := b.Counters.Get(bonding.TxBytes); sum != 300+a2 {
		t.Errorf("bond tx %d, members %d", sum, 300+a2)
	}
	if _, ok := b.Counters.Get(bonding.RxBytes); ok {
		t.Error("rx bytes summed though a0 and a1 have none")
	}
}

func TestOVSBondsWithoutOVS(t *testing.T) {
	dir := t.TempDir()
	linux := collector.Reading{Bonds: []bonding.Bond{{Name: "bond0"}}}

	// Asked for (--ovs-rundir) and absent: a warning, the kernel's bonds stay.
	// A clock a second on at each look: the kernel's counters (read
	// before add) age by the OVS read, here two looks.
	clk := collectortest.NewClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	tick := func() time.Time { clk.Advance(time.Second); return clk.Now() }
	o := &ovsBonds{client: ovs.NewClient(dir), explicit: true, links: fakeLinks{}, now: tick}
	linux.CountersAge = time.Millisecond
	r, err := o.add(linux, nil)
	if err != nil || len(r.Bonds) != 1 || r.Bonds[0].Kind != bonding.KindLinux || len(r.Warnings) != 1 {
		t.Fatalf("explicit, absent: %+v, %v", r, err)
	}
	if want := time.Second + time.Millisecond; r.CountersAge != want {
		t.Errorf("kernel counters' age %v after the OVS read, want %v", r.CountersAge, want)
	}
	linux.CountersAge = 0
	// No bonding driver either: both reasons in the error.
	if _, err := o.add(collector.Reading{}, collector.ErrNoBonding); !errors.Is(err, collector.ErrNoBonding) || !strings.Contains(err.Error(), "db.sock") {
		t.Fatalf("explicit, nothing: %v", err)
	}
	// The default directory on a host without OVS: silence.
	o.explicit = false
	if r, err := o.add(linux, nil); err != nil || len(r.Warnings) != 0 {
		t.Fatalf("default, absent: %+v, %v", r, err)
	}
	if _, err := o.add(collector.Reading{}, collector.ErrNoBonding); err != collector.ErrNoBonding {
		t.Fatalf("default, nothing: %v", err)
	}
	// Any other kernel error stands alone.
	boom := errors.New("netlink: boom")
	if _, err := o.add(linux, boom); err != boom {
		t.Fatalf("kernel error: %v", err)
	}
}

// str is *p, or "" for nil.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
