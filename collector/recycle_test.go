package collector

import (
	"slices"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// TestReadingArraysTakeBackOnlyTheirOwn: an array the arrays did not make
// (a cache's own, which a reading may carry) is never handed out to be
// written; one put twice is handed out once; a bond takes the smallest
// array that fits.
func TestReadingArraysTakeBackOnlyTheirOwn(t *testing.T) {
	var a readingArrays
	cache := []bonding.Slave{{Name: "e1"}, {Name: "e2"}}
	a.put([]bonding.Bond{{Name: "bond0", Slaves: cache}})
	got := a.takeSlaves(cache)
	if &got[0] == &cache[0] {
		t.Fatal("a cache's slaves were handed out to be written")
	}

	four := a.takeSlaves(make([]bonding.Slave, 4))
	two := got
	bonds := a.takeBonds(2)
	bonds = append(bonds, bonding.Bond{Name: "bond0", Slaves: four}, bonding.Bond{Name: "bond1", Slaves: two})
	a.put(bonds)
	a.put(bonds) // a second time: must not be handed out twice
	if len(a.bonds.free) != 1 || len(a.slaves.free) != 2 {
		t.Fatalf("kept %d bonds' arrays and %d slaves' arrays, want 1 and 2", len(a.bonds.free), len(a.slaves.free))
	}
	if four[0].Name != "" || bonds[:2][0].Name != "" {
		t.Error("a kept array still holds a past reading's values")
	}

	small := a.takeSlaves([]bonding.Slave{{Name: "x"}})
	if &small[:1][0] != &two[0] {
		t.Error("a bond of one slave did not take the array of two, the smallest that fits")
	}
	big := a.takeSlaves(make([]bonding.Slave, 4))
	if &big[0] != &four[0] {
		t.Error("a bond of four slaves did not get the array of four back")
	}
	again := a.takeSlaves(make([]bonding.Slave, 4))
	if &again[0] == &four[0] {
		t.Error("an array put twice was handed out twice")
	}
	b2 := a.takeBonds(2)
	if &b2[:1][0] != &bonds[:1][0] {
		t.Error("the bonds' array was not taken back")
	}
	if b3 := a.takeBonds(2); &b3[:1][0] == &bonds[:1][0] {
		t.Error("the bonds' array put twice was handed out twice")
	}
}

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

func (rs *recyclingSource) recycle(bonds []bonding.Bond) {
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
	clk := &fakeClock{now: time.Unix(1_000_000, 0)}
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

// TestReadingArraysForgetWhatNeverComesBack: a source whose readings are
// rebuilt elsewhere (their arrays never come back) does not make the
// record of arrays grow without end.
func TestReadingArraysForgetWhatNeverComesBack(t *testing.T) {
	var a readingArrays
	for range 3 * maxOwned {
		a.takeBonds(2)
		a.takeSlaves(make([]bonding.Slave, 2))
	}
	if len(a.bonds.owned) > maxOwned || len(a.slaves.owned) > maxOwned {
		t.Errorf("remembers %d bonds' and %d slaves' arrays, want at most %d", len(a.bonds.owned), len(a.slaves.owned), maxOwned)
	}
}
