package collector

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/bondtop/bondtop/model"
)

// fakeNeighbors stands in for the packet sockets; the real ones are
// judged by lldpd (collector/neighbors) and in the lab.
type fakeNeighbors struct {
	err     error
	watches [][]string
	heard   map[string]*neighbors.Neighbor
}

func (f *fakeNeighbors) Watch(s []string) error { f.watches = append(f.watches, s); return f.err }
func (f *fakeNeighbors) Neighbor(s string, _ time.Time, into *neighbors.Neighbor) bool {
	n, ok := f.heard[s]
	if ok {
		*into = *n
	}
	return ok
}
func (f *fakeNeighbors) LACPDUAge(string, time.Time) (time.Duration, bool) { return 0, false }
func (f *fakeNeighbors) HeardLACPDU(string, *neighbors.LACPDU) bool        { return false }

func TestNeighborTrackerJSON(t *testing.T) {
	name := "leaf1"
	fake := &fakeNeighbors{heard: map[string]*neighbors.Neighbor{
		"eth0": {Protocol: "lldp", ChassisID: "00:1c:73:00:00:01", SystemName: &name, PortID: "Ethernet7", TTLSeconds: 120},
	}}
	snap := &model.Snapshot{Bonds: []model.BondSample{{Slaves: []model.SlaveSample{{}, {}}}}}
	snap.Bonds[0].Slaves[0].Name, snap.Bonds[0].Slaves[1].Name = "eth1", "eth0"
	tr := newNeighborTracker(fake, nil)
	tr.attach(snap, time.Second, nil)
	tr.attach(snap, time.Second, nil)
	if len(fake.watches) != 1 || strings.Join(fake.watches[0], ",") != "eth0,eth1" {
		t.Errorf("watch calls %v: one, for both slaves", fake.watches)
	}
	js, _ := json.Marshal(snap.Bonds[0])
	if !strings.Contains(string(js), `"neighbor":null`) || !strings.Contains(string(js), `"system_name":"leaf1"`) || strings.Contains(string(js), "neighbors_why") {
		t.Errorf("JSON %s", js)
	}

	// Without a reader the keys are absent: older goldens stay valid.
	plain, _ := json.Marshal(model.SlaveSample{})
	if strings.Contains(string(plain), "neighbor") {
		t.Errorf("a sample of a source that does not listen: %s", plain)
	}

	denied := newNeighborTracker(&fakeNeighbors{err: fmt.Errorf("listen on eth0: %w", errors.Join(neighbors.ErrNoPermission))}, nil)
	snap2 := &model.Snapshot{Bonds: []model.BondSample{{Slaves: []model.SlaveSample{{}}}}}
	snap2.Bonds[0].Slaves[0].Name = "eth0"
	denied.attach(snap2, time.Second, nil)
	js, _ = json.Marshal(snap2.Bonds[0])
	if !strings.Contains(string(js), `"neighbors_why":"listening for LLDP/CDP needs CAP_NET_RAW`) || !strings.Contains(string(js), `"neighbor":null`) {
		t.Errorf("JSON without CAP_NET_RAW: %s", js)
	}
}

// fakeCounters stands in for the kernel's counters (the real ones are
// judged in the lab: TestLACPDU, TestCarrierFlapUnseen); reads counts
// the LACPDU requests.
type fakeCounters struct {
	lacpdu  map[string]bonding.LACPDUCounters
	carrier map[string]*bonding.CarrierCounts
	reads   int
}

func (f *fakeCounters) CarrierCounts(_ []string, into map[string]*bonding.CarrierCounts) {
	for k, v := range f.carrier {
		into[k] = v
	}
}

func (f *fakeCounters) LACPDUCounters(_ []string, into map[string]bonding.LACPDUCounters) {
	f.reads++
	for k, v := range f.lacpdu {
		into[k] = v
	}
}

func TestPortCountersLastRxAge(t *testing.T) {
	fc := &fakeCounters{
		lacpdu:  map[string]bonding.LACPDUCounters{"eth0": {Rx: 10, Tx: 10}},
		carrier: map[string]*bonding.CarrierCounts{"eth0": {Up: 1, Down: 0}, "eth1": nil},
	}
	tr := newNeighborTracker(nil, fc)
	start := time.Unix(1000, 0)
	sample := func(at time.Duration) *model.SlaveSample {
		snap := &model.Snapshot{Time: start.Add(at), Bonds: []model.BondSample{{Slaves: []model.SlaveSample{{}, {}}}}}
		snap.Bonds[0].Slaves[0].Name, snap.Bonds[0].Slaves[1].Name = "eth0", "eth1"
		tr.attach(snap, time.Second, nil)
		if s := snap.Bonds[0].Slaves[1]; s.SwitchSide == nil || s.LACPDU != nil || s.Carrier != nil || s.Neighbor != nil {
			t.Fatalf("eth1 reports nothing, so shows nothing: %+v", s.SwitchSide)
		}
		return &snap.Bonds[0].Slaves[0]
	}
	s := sample(0)
	if s.LACPDU == nil || s.LACPDU.LastRxAgeSeconds != nil || s.Carrier.Up != 1 {
		t.Fatalf("first sample: %+v", s.SwitchSide)
	}
	s = sample(2 * time.Second)
	if s.LACPDU.LastRxAgeSeconds != nil || s.LACPDU.SilentSeconds != 2 {
		t.Fatalf("counter stood still for 2 s: age %v silent %v", s.LACPDU.LastRxAgeSeconds, s.LACPDU.SilentSeconds)
	}
	fc.lacpdu["eth0"] = bonding.LACPDUCounters{Rx: 11, Tx: 10}
	s = sample(3 * time.Second)
	if s.LACPDU.LastRxAgeSeconds == nil || *s.LACPDU.LastRxAgeSeconds != 0 {
		t.Fatalf("counter rose: age %v", s.LACPDU.LastRxAgeSeconds)
	}
	s = sample(7 * time.Second)
	if *s.LACPDU.LastRxAgeSeconds != 4 || s.LACPDU.SilentSeconds != 4 {
		t.Fatalf("4 s after the rise: age %v", *s.LACPDU.LastRxAgeSeconds)
	}
	js, _ := json.Marshal(s)
	for _, k := range []string{`"lacpdu":{"rx":11,"tx":10,`, `"last_rx_age_s":4`, `"carrier":{"up_count":1,"down_count":0}`} {
		if !strings.Contains(string(js), k) {
			t.Errorf("JSON lacks %s: %s", k, js)
		}
	}
	fc.lacpdu["eth0"] = bonding.LACPDUCounters{Rx: 2} // re-enslaved: counters start over
	if s = sample(8 * time.Second); s.LACPDU.LastRxAgeSeconds != nil {
		t.Errorf("after a reset the age is unknown again, got %v", *s.LACPDU.LastRxAgeSeconds)
	}
	delete(fc.lacpdu, "eth0") // the bond left 802.3ad
	if s = sample(9 * time.Second); s.LACPDU != nil || s.Carrier == nil {
		t.Errorf("without LACPDU counters: %+v", s.SwitchSide)
	}
}

// TestLACPDUCountersOncePerSecond: at 100 ms the LACPDU counters are asked
// for once a second, not on every tick; at once when the slaves change;
// on every tick at a pace of a second. Between two reads the snapshots
// share the switch's side of the last (nothing in it changed), and the
// silence counts as the last read saw it.
func TestLACPDUCountersOncePerSecond(t *testing.T) {
	fc := &fakeCounters{
		lacpdu:  map[string]bonding.LACPDUCounters{"eth0": {Rx: 10, Tx: 10}, "eth1": {Rx: 5, Tx: 5}},
		carrier: map[string]*bonding.CarrierCounts{"eth0": {Up: 1}, "eth1": {Up: 1}},
	}
	tr := newNeighborTracker(nil, fc)
	now := time.Unix(1000, 0)
	names := []string{"eth0", "eth1"}
	tick := func(interval time.Duration) *model.Snapshot {
		now = now.Add(interval)
		// Ticks come a few milliseconds off their time.
		at := now.Add(time.Duration(len(names)*fc.reads%3) * time.Millisecond)
		snap := &model.Snapshot{Time: at, Bonds: []model.BondSample{{Slaves: make([]model.SlaveSample, len(names))}}}
		for i, n := range names {
			snap.Bonds[0].Slaves[i].Name = n
		}
		tr.attach(snap, interval, nil)
		return snap
	}
	first := tick(MinInterval)
	for range 29 {
		snap := tick(MinInterval)
		if s := &snap.Bonds[0].Slaves[0]; fc.reads == 1 && s.SwitchSide != first.Bonds[0].Slaves[0].SwitchSide {
			t.Fatal("a tick without a read made a new SwitchSide for a slave whose counters did not change")
		}
	}
	if fc.reads != 3 {
		t.Errorf("30 ticks at 100 ms (3 s) asked for the LACPDU counters %d times, want 3 (once a second)", fc.reads)
	}
	// The partner goes silent on eth1: the silence counts from the last
	// read that saw a rise, up to the last read, never further.
	fc.lacpdu["eth0"] = bonding.LACPDUCounters{Rx: 11, Tx: 11}
	var snap *model.Snapshot
	for range 35 {
		snap = tick(MinInterval)
	}
	if fc.reads != 7 {
		t.Errorf("after 3.5 s more: %d reads, want 7", fc.reads)
	}
	if s := snap.Bonds[0].Slaves[1].LACPDU; s == nil || s.SilentSeconds < 6 || s.SilentSeconds > 6.01 {
		t.Errorf("eth1 silent for the 6 s of the reads, got %+v", s)
	}
	// eth0's rise was seen by the first read after it, three reads
	// before the last.
	if s := snap.Bonds[0].Slaves[0].LACPDU; s == nil || s.Rx != 11 || s.LastRxAgeSeconds == nil ||
		*s.LastRxAgeSeconds != s.SilentSeconds || s.SilentSeconds < 2.99 || s.SilentSeconds > 3.01 {
		t.Errorf("eth0's rise, three reads before the last: %+v", s)
	}
	names = []string{"eth0", "eth1", "eth2"}
	fc.lacpdu["eth2"] = bonding.LACPDUCounters{Rx: 1}
	reads := fc.reads
	snap = tick(MinInterval)
	if fc.reads != reads+1 || snap.Bonds[0].Slaves[2].LACPDU == nil {
		t.Errorf("a new slave: %d reads (want %d), its counters %+v", fc.reads, reads+1, snap.Bonds[0].Slaves[2].SwitchSide)
	}
	reads = fc.reads
	for range 5 {
		tick(time.Second)
	}
	if fc.reads != reads+5 {
		t.Errorf("5 ticks at 1 s: %d reads, want 5", fc.reads-reads)
	}
}

type fakeFirmware map[string]map[string]bool

func (f fakeFirmware) FirmwareLLDP(slave string) (bool, bool) {
	return bonding.FirmwareLLDPAgent(f[slave])
}

func TestFirmwareLLDPFlags(t *testing.T) {
	fw := fakeFirmware{
		"i40e-agent": {"disable-fw-lldp": false, "link-down-on-close": false},
		"i40e-off":   {"disable-fw-lldp": true},
		"ice-agent":  {"fw-lldp-agent": true},
		"other":      {"legacy-rx": true},
	}
	tr := newNeighborTracker(&fakeNeighbors{}, nil)
	tr.firmware = fw
	snap := &model.Snapshot{Bonds: []model.BondSample{{}}}
	for _, n := range []string{"i40e-agent", "i40e-off", "ice-agent", "other"} {
		s := model.SlaveSample{}
		s.Name = n
		snap.Bonds[0].Slaves = append(snap.Bonds[0].Slaves, s)
	}
	tr.attach(snap, time.Second, nil)
	want := map[string]string{"i40e-agent": "true", "i40e-off": "false", "ice-agent": "true", "other": "absent"}
	for _, s := range snap.Bonds[0].Slaves {
		got := "absent"
		if s.FirmwareLLDPAgent != nil {
			got = fmt.Sprint(*s.FirmwareLLDPAgent)
		}
		if got != want[s.Name] {
			t.Errorf("%s: firmware agent %s, want %s", s.Name, got, want[s.Name])
		}
	}
}

// TestSwitchSideRoundTrip: a recording keeps the switch's side (replay
// decodes the JSON a recorder wrote).
func TestSwitchSideRoundTrip(t *testing.T) {
	name := "leaf1"
	in := model.SlaveSample{SwitchSide: &model.SwitchSide{
		Neighbor: &neighbors.Neighbor{Protocol: "lldp", ChassisID: "02:aa:00:00:00:01", SystemName: &name, PortID: "Ethernet7", TTLSeconds: 120},
		LACPDU:   &model.LACPDUSample{LACPDUCounters: bonding.LACPDUCounters{Rx: 5, Tx: 6}},
		Carrier:  &bonding.CarrierCounts{Up: 2, Down: 1},
	}}
	in.Name = "eth0"
	js, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out model.SlaveSample
	if err := json.Unmarshal(js, &out); err != nil {
		t.Fatal(err)
	}
	if out.SwitchSide == nil || out.Neighbor == nil || *out.Neighbor.SystemName != "leaf1" || out.LACPDU.Tx != 6 || out.Carrier.Down != 1 {
		t.Fatalf("after a round trip: %s -> %+v", js, out.SwitchSide)
	}
	var plain model.SlaveSample
	if err := json.Unmarshal([]byte(`{"name":"eth0"}`), &plain); err != nil || plain.SwitchSide != nil {
		t.Fatalf("a recording without the keys: %+v %v", plain.SwitchSide, err)
	}
}
