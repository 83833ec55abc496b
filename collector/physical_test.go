package collector

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/model"
)

// fakePhys counts reads; "veth" reports only a link state, "sfp" a module
// whose temperature is the read's number.
type fakePhys struct {
	mu    sync.Mutex
	reads int
	block chan struct{} // when set, each read waits for it to close
}

func (f *fakePhys) Physical(slave string) (*model.Physical, bool) {
	if f.block != nil {
		<-f.block
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	up := true
	switch slave {
	case "sfp":
		temp := float64(f.reads)
		return &model.Physical{LinkState: &bonding.LinkState{Detected: &up}, Module: &module.Module{Type: "SFP", TemperatureC: &temp}}, true
	case "veth":
		return &model.Physical{LinkState: &bonding.LinkState{Detected: &up}}, false
	}
	return nil, false
}

func physSnap(at time.Time) *model.Snapshot {
	return &model.Snapshot{Time: at, Bonds: []model.BondSample{{Slaves: []model.SlaveSample{
		{Slave: bonding.Slave{Name: "sfp"}}, {Slave: bonding.Slave{Name: "veth"}}, {Slave: bonding.Slave{Name: "virtio"}}}}}}
}

func TestPhysTrackerSchedule(t *testing.T) {
	f := &fakePhys{}
	tr := newPhysTracker(f)
	t0 := time.Unix(1000, 0)
	s := physSnap(t0)
	tr.attach(t0, s)
	if f.reads != 3 {
		t.Fatalf("first attach read %d slaves, want 3 at once", f.reads)
	}
	sl := s.Bonds[0].Slaves
	if sl[0].Physical == nil || *sl[0].Module.TemperatureC != 1 || sl[1].Module != nil || sl[2].Physical != nil {
		t.Fatalf("first snapshot: %+v %+v %+v", sl[0].Physical, sl[1].Physical, sl[2].Physical)
	}
	if !slices.Contains(s.Notes, physNeedsRoot) {
		t.Errorf("notes %v lack the root note", s.Notes)
	}
	b, _ := json.Marshal(s.Bonds[0].Slaves[2])
	for _, k := range []string{`"module"`, `"fec"`, `"link_state"`} {
		if strings.Contains(string(b), k) {
			t.Errorf("a slave without physical data has %s: %s", k, b)
		}
	}
	// Ticks within the interval read nothing.
	for i := 1; i < 10; i++ {
		tr.attach(t0.Add(time.Duration(i)*time.Second), physSnap(t0))
	}
	if f.reads != 3 {
		t.Errorf("reads within the interval: %d", f.reads-3)
	}
	// A slow NIC (the last read took longer than physSyncBudget): at the
	// interval a background read starts, the tick does not wait for it,
	// and its result shows once done.
	tr.took = time.Second
	f.block = make(chan struct{})
	s = physSnap(t0)
	tr.attach(t0.Add(DefaultPhysicalInterval), s)
	if got := *s.Bonds[0].Slaves[0].Module.TemperatureC; got != 1 {
		t.Errorf("temperature %v while the slow read runs, want the first read's 1", got)
	}
	close(f.block)
	tr.wg.Wait()
	f.block = nil
	s = physSnap(t0)
	tr.attach(t0.Add(DefaultPhysicalInterval+time.Second), s)
	if f.reads != 6 {
		t.Errorf("reads after the interval: %d, want 6", f.reads)
	}
	if got := *s.Bonds[0].Slaves[0].Module.TemperatureC; got != 4 {
		t.Errorf("temperature %v, want the second read's 4", got)
	}
	// A slave's MII status changes: the link state is re-read at once.
	s = physSnap(t0)
	s.Bonds[0].Slaves[1].MIIStatus = new("down")
	tr.attach(t0.Add(DefaultPhysicalInterval+2*time.Second), s)
	tr.wg.Wait()
	if f.reads != 9 {
		t.Errorf("reads after a link change: %d, want 9", f.reads)
	}
}
