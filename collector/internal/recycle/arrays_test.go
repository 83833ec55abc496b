package recycle

import (
	"testing"

	"github.com/bondtop/bondtop/bonding"
)

// TestReadingArraysTakeBackOnlyTheirOwn: an array the arrays did not make
// (a cache's own, which a reading may carry) is never handed out to be
// written; one put twice is handed out once; a bond takes the smallest
// array that fits.
func TestReadingArraysTakeBackOnlyTheirOwn(t *testing.T) {
	var a Arrays
	cache := []bonding.Slave{{Name: "e1"}, {Name: "e2"}}
	a.Put([]bonding.Bond{{Name: "bond0", Slaves: cache}})
	got := a.TakeSlaves(cache)
	if &got[0] == &cache[0] {
		t.Fatal("a cache's slaves were handed out to be written")
	}

	four := a.TakeSlaves(make([]bonding.Slave, 4))
	two := got
	bonds := a.TakeBonds(2)
	bonds = append(bonds, bonding.Bond{Name: "bond0", Slaves: four}, bonding.Bond{Name: "bond1", Slaves: two})
	a.Put(bonds)
	a.Put(bonds) // a second time: must not be handed out twice
	if len(a.bonds.free) != 1 || len(a.slaves.free) != 2 {
		t.Fatalf("kept %d bonds' arrays and %d slaves' arrays, want 1 and 2", len(a.bonds.free), len(a.slaves.free))
	}
	if four[0].Name != "" || bonds[:2][0].Name != "" {
		t.Error("a kept array still holds a past reading's values")
	}

	small := a.TakeSlaves([]bonding.Slave{{Name: "x"}})
	if &small[:1][0] != &two[0] {
		t.Error("a bond of one slave did not take the array of two, the smallest that fits")
	}
	big := a.TakeSlaves(make([]bonding.Slave, 4))
	if &big[0] != &four[0] {
		t.Error("a bond of four slaves did not get the array of four back")
	}
	again := a.TakeSlaves(make([]bonding.Slave, 4))
	if &again[0] == &four[0] {
		t.Error("an array put twice was handed out twice")
	}
	b2 := a.TakeBonds(2)
	if &b2[:1][0] != &bonds[:1][0] {
		t.Error("the bonds' array was not taken back")
	}
	if b3 := a.TakeBonds(2); &b3[:1][0] == &bonds[:1][0] {
		t.Error("the bonds' array put twice was handed out twice")
	}
}

// TestReadingArraysForgetWhatNeverComesBack: a source whose readings are
// rebuilt elsewhere (their arrays never come back) does not make the
// record of arrays grow without end.
func TestReadingArraysForgetWhatNeverComesBack(t *testing.T) {
	var a Arrays
	for range 3 * maxOwned {
		a.TakeBonds(2)
		a.TakeSlaves(make([]bonding.Slave, 2))
	}
	if len(a.bonds.owned) > maxOwned || len(a.slaves.owned) > maxOwned {
		t.Errorf("remembers %d bonds' and %d slaves' arrays, want at most %d", len(a.bonds.owned), len(a.slaves.owned), maxOwned)
	}
}
