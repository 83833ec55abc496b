package collector_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/internal/testtree"
	"github.com/bondtop/bondtop/model"
)

// slowSource takes longer to read than the interval asked for.
type slowSource struct {
	collector.Source
	delay time.Duration
}

func (s *slowSource) Read() (collector.Reading, error) {
	time.Sleep(s.delay)
	return s.Source.Read()
}

// A tick whose work outlasts the interval: the snapshots say so once in
// their warnings, and mark the pace achieved on every one while behind.
func TestSamplerSaysWhenBehind(t *testing.T) {
	tr := testtree.FourSlave(t)
	root, err := rootdir.New(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowSource{Source: root, delay: 250 * time.Millisecond}
	s := collector.NewSampler(slow, collector.Options{Interval: collector.MinInterval, History: collector.NoHistory})
	var snaps []*model.Snapshot
	if err := s.Intervals(context.Background(), collector.BehindAfter+4, func(sn *model.Snapshot) { snaps = append(snaps, sn) }); err != nil {
		t.Fatal(err)
	}
	warned := 0
	for _, sn := range snaps {
		for _, w := range sn.Warnings {
			if strings.Contains(w, "cannot keep the 100ms interval") {
				warned++
			}
		}
	}
	last := snaps[len(snaps)-1]
	if warned != 1 {
		t.Errorf("warned %d times, want once", warned)
	}
	if last.Behind < 200*time.Millisecond || last.Behind > time.Second {
		t.Errorf("last snapshot: behind %v, want the pace achieved (about 250 ms)", last.Behind)
	}

	// The same source at a pace it keeps: no warning.
	slow.delay = 0
	s.SetInterval(300 * time.Millisecond)
	snaps = nil
	if err := s.Intervals(context.Background(), collector.BehindAfter+2, func(sn *model.Snapshot) { snaps = append(snaps, sn) }); err != nil {
		t.Fatal(err)
	}
	for _, sn := range snaps {
		if sn.Behind != 0 || len(sn.Warnings) > 0 {
			t.Fatalf("at a pace kept: behind %v, warnings %q", sn.Behind, sn.Warnings)
		}
	}
}
