package collector_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/internal/testtree"
	"github.com/bondtop/bondtop/model"
)

// TestStayUpFirstRead: with StayUp a host without the driver, or without
// a followed bond, is a snapshot that says so from the first read;
// without it, the first read reports the mistake.
func TestStayUpFirstRead(t *testing.T) {
	empty := t.TempDir()
	tree := testtree.New(t)
	tree.ProcFile("bond0", "8023ad-6.8-healthy-root.txt")
	withBond := tree.Dir
	sample := func(dir string, o collector.Options) (*model.Snapshot, error) {
		src, err := rootdir.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		return collector.NewSampler(src, o).Sample()
	}

	if _, err := sample(empty, collector.Options{}); !errors.Is(err, collector.ErrNoBonding) {
		t.Errorf("no driver, without StayUp: %v, want ErrNoBonding", err)
	}
	snap, err := sample(empty, collector.Options{StayUp: true})
	if err != nil || !snap.NoBonding || len(snap.Bonds) != 0 {
		t.Errorf("no driver, StayUp: %+v, %v; want an empty snapshot with NoBonding", snap, err)
	}

	var nf *collector.NotFoundError
	if _, err := sample(withBond, collector.Options{Bonds: []string{"bond9"}}); !errors.As(err, &nf) {
		t.Errorf("bond9 missing, without StayUp: %v, want a NotFoundError", err)
	}
	snap, err = sample(withBond, collector.Options{Bonds: []string{"bond0", "bond9"}, StayUp: true})
	if err != nil || !slices.Equal(snap.Missing, []string{"bond9"}) || snap.Bond("bond0") == nil || snap.NoBonding {
		t.Errorf("bond9 missing, StayUp: %+v, %v; want bond0 and Missing [bond9]", snap, err)
	}
}
