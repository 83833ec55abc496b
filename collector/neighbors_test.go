package collector

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/collector/neighbors"
)

// fakeNeighbors stands in for the packet sockets; the real ones are
// judged by lldpd (collector/neighbors) and in the lab.
type fakeNeighbors struct {
	err     error
	watches [][]string
	heard   map[string]*neighbors.Neighbor
}

func (f *fakeNeighbors) Watch(s []string) error { f.watches = append(f.watches, s); return f.err }
func (f *fakeNeighbors) Neighbor(s string) *neighbors.Neighbor {
	return f.heard[s]
}

func TestNeighborTrackerJSON(t *testing.T) {
	name := "leaf1"
	fake := &fakeNeighbors{heard: map[string]*neighbors.Neighbor{
		"eth0": {Protocol: "lldp", ChassisID: "00:1c:73:00:00:01", SystemName: &name, PortID: "Ethernet7", TTLSeconds: 120},
	}}
	snap := &Snapshot{Bonds: []BondSample{{Slaves: []SlaveSample{{}, {}}}}}
	snap.Bonds[0].Slaves[0].Name, snap.Bonds[0].Slaves[1].Name = "eth1", "eth0"
	tr := &neighborTracker{r: fake}
	tr.attach(snap)
	tr.attach(snap)
	if len(fake.watches) != 1 || strings.Join(fake.watches[0], ",") != "eth0,eth1" {
		t.Errorf("watch calls %v: one, for both slaves", fake.watches)
	}
	js, _ := json.Marshal(snap.Bonds[0])
	if !strings.Contains(string(js), `"neighbor":null`) || !strings.Contains(string(js), `"system_name":"leaf1"`) || strings.Contains(string(js), "neighbors_why") {
		t.Errorf("JSON %s", js)
	}

	// Without a reader the keys are absent: older goldens stay valid.
	plain, _ := json.Marshal(SlaveSample{})
	if strings.Contains(string(plain), "neighbor") {
		t.Errorf("a sample of a source that does not listen: %s", plain)
	}

	denied := &neighborTracker{r: &fakeNeighbors{err: fmt.Errorf("listen on eth0: %w", errors.Join(neighbors.ErrNoPermission))}}
	snap2 := &Snapshot{Bonds: []BondSample{{Slaves: []SlaveSample{{}}}}}
	snap2.Bonds[0].Slaves[0].Name = "eth0"
	denied.attach(snap2)
	js, _ = json.Marshal(snap2.Bonds[0])
	if !strings.Contains(string(js), `"neighbors_why":"listening for LLDP/CDP needs CAP_NET_RAW`) || !strings.Contains(string(js), `"neighbor":null`) {
		t.Errorf("JSON without CAP_NET_RAW: %s", js)
	}
}
