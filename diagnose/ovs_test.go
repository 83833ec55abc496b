package diagnose

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ovs"
)

// ovsFixture is an OVS bond from the replies the real OVS gave in
// ovs.TestRealOVS (ovs/testdata), through model.FromOVS.
func ovsFixture(t *testing.T, bond, bondShow, lacpShow string) model.BondSample {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "ovs", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	h, err := ovs.HostFromReplies(json.RawMessage(read("transact.json")), read(bondShow), read(lacpShow), read("lacp-show-stats.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ob := h.Bond(bond)
	if ob == nil {
		t.Fatalf("no %s in the fixture", bond)
	}
	b := model.FromOVS(ob)
	s := model.BondSample{Bond: b}
	for _, sl := range b.Slaves {
		s.Slaves = append(s.Slaves, model.SlaveSample{Slave: sl})
	}
	return s
}

func findingIDList(fs []Finding) string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.ID+"("+string(f.Severity)+")")
	}
	return strings.Join(ids, " ")
}

func TestOVSHealthyFixture(t *testing.T) {
	// The captured bond-a: LACP on every member, rebalancing every second,
	// 64 light flows: nothing to say.
	fs := analyzeOne(ovsFixture(t, "bond-a", "bond-show.txt", "lacp-show.txt"))
	for _, f := range fs {
		if strings.HasPrefix(f.ID, "ovs-") || f.ID == IDConfigUnknown || f.ID == IDHashCheck {
			t.Errorf("healthy OVS bond: %s: %s", f.ID, f.Message)
		}
	}
	// bond-b runs with bond-rebalance-interval=0.
	fs = analyzeOne(ovsFixture(t, "bond-b", "bond-show.txt", "lacp-show.txt"))
	if f := find(fs, IDOVSRebalanceOff); f == nil || !strings.Contains(f.Message, "bond-rebalance-interval=0") {
		t.Errorf("bond-b: findings %s", findingIDList(fs))
	}
}

func TestOVSBucketDominant(t *testing.T) {
	b := ovsFixture(t, "bond-a", "bond-show.txt", "lacp-show.txt")
	if fs := analyzeOne(b); find(fs, IDOVSBucketDominant) != nil {
		t.Fatalf("light spread load: %s", findingIDList(fs))
	}
	// One flow of 3 MB in the first bucket of the first member that has one.
	for i := range b.Slaves {
		if bs := b.Slaves[i].OVS.Buckets; len(bs) > 0 {
			bs[0].LoadKB = 3000
			fs := analyzeOne(b)
			f := find(fs, IDOVSBucketDominant)
			want := fmt.Sprintf("bucket %d carries", bs[0].Hash)
			if f == nil || !strings.Contains(f.Message, want) || f.Slaves[0] != b.Slaves[i].Name {
				t.Fatalf("findings %s: %+v", findingIDList(fs), f)
			}
			return
		}
	}
	t.Fatal("no buckets in the fixture")
}

func TestOVSLACPPartial(t *testing.T) {
	// The capture after a1 went down: a1 is no longer current.
	b := ovsFixture(t, "bond-a", "bond-show-down.txt", "lacp-show-down.txt")
	fs := analyzeOne(b)
	f := find(fs, IDOVSLACPPartial)
	if f == nil || len(f.Slaves) != 1 || f.Slaves[0] != "a1" || !strings.Contains(f.Message, "a0, a2 only") {
		t.Fatalf("findings %s: %+v", findingIDList(fs), f)
	}
	for i := range b.Slaves {
		b.Slaves[i].OVS.LACPStatus = "defaulted detached"
	}
	if f := find(analyzeOne(b), IDOVSLACPPartial); f == nil || f.Severity != Critical {
		t.Errorf("no member negotiated: %+v", f)
	}
	// active-backup without LACP: none of this applies.
	if fs := analyzeOne(ovsFixture(t, "ab-c", "bond-show.txt", "lacp-show.txt")); len(fs) != 0 {
		t.Errorf("ab-c: %s", findingIDList(fs))
	}
}
