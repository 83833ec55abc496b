package collector

import (
	"slices"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
)

// recyclingSource is a readingSource that recycles: it records which of
// the arrays it handed out came back, and checks they are not held.
type recyclingSource struct {
	readingSource
	s        *Sampler
	out      [][]bonding.Bond // every reading's bonds handed out
	returned int
	t        *testing.T
}

func (rs *recyclingSource) Read() (Reading, error) {
	r, err := rs.readingSource.Read()
	rs.out = append(rs.out, r.Bonds)
	return r, err
}

func (rs *recyclingSource) Recycle(bonds []bonding.Bond) {
	if cap(bonds) == 0 {
		return
	}
	if !slices.ContainsFunc(rs.out, func(o []bonding.Bond) bool { return sameArray(o, bonds) }) {
		rs.t.Error("a reading not handed out (or handed back twice) came back")
	}
	rs.out = slices.DeleteFunc(rs.out, func(o []bonding.Bond) bool { return sameArray(o, bonds) })
	if sameArray(bonds, rs.s.prev) || sameArray(bonds, rs.s.last) {
		rs.t.Error("the Sampler handed back a reading it still compares with")
	}
	rs.returned++
}

// TestSamplerHandsBackWhatItLetsGo: over snapshots and changes read in
// between (the Sampler then holds two readings), every reading it lets go
// comes back to the source once, and none it holds.
func TestSamplerHandsBackWhatItLetsGo(t *testing.T) {
	clk := collectortest.NewClock(time.Unix(1_000_000, 0))
	src := &recyclingSource{t: t, readingSource: readingSource{r: Reading{Bonds: []bonding.Bond{
		{Name: "bond0", Mode: new(bonding.Mode8023AD), Slaves: []bonding.Slave{{Name: "e1"}, {Name: "e2"}}}}}}}
	s := NewSampler(src, Options{Interval: time.Second, History: NoHistory, Clock: clk.Now})
	src.s = s
	steps := []bool{false, true, false, true, true, false, false} // true: a change read between snapshots
	for _, observe := range steps {
		clk.Advance(time.Second)
		if observe {
			if err := s.observe(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := s.Sample(); err != nil {
			t.Fatal(err)
		}
	}
	// Seven reads; the Sampler still holds the last.
	if src.returned != len(steps)-1 || len(src.out) != 1 || !sameArray(src.out[0], s.prev) {
		t.Errorf("%d readings came back and %d are out, want %d and the one held", src.returned, len(src.out), len(steps)-1)
	}
}
