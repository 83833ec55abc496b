package collector

import "github.com/bondtop/bondtop/bonding"

// A recycler is a Source that takes back the arrays of a Reading its
// Sampler no longer holds, for its next Read to fill: a steady tick then
// allocates no reading. The Sampler calls it where it calls Read (a
// source read from several goroutines guards it as it guards Read); a
// reading that other code got from Read is never handed back.
type recycler interface {
	recycle(bonds []bonding.Bond)
}

// readingArrays are the arrays of the readings a Sampler has let go (the
// bonds' array, each bond's slaves), kept for the next Read.
//
// It takes back only the arrays it handed out itself (take*): a reading's
// slaves may be a cache's own array (a bond merged from the files is kept
// as it was made, for the ticks whose inputs are the same), and that one
// must never be written again. The zero value is ready.
type readingArrays struct {
	bonds  [][]bonding.Bond
	slaves [][]bonding.Slave
	// owned are the first elements of the arrays take* made. It is
	// bounded: past maxOwned (a source whose readings are rebuilt
	// elsewhere, whose arrays never come back) it is forgotten, which
	// only costs the reuse of the arrays still out.
	ownedBonds  map[*bonding.Bond]struct{}
	ownedSlaves map[*bonding.Slave]struct{}
}

// maxOwned bounds the arrays a readingArrays remembers making: a Sampler
// holds at most two readings besides the one being read, and a host has
// at most a few hundred bonds.
const maxOwned = 4096

// takeBonds returns an empty array with room for n bonds.
func (a *readingArrays) takeBonds(n int) []bonding.Bond {
	if i := bestFit(a.bonds, n); i >= 0 {
		arr := a.bonds[i]
		a.bonds = removeAt(a.bonds, i)
		return arr[:0]
	}
	arr := make([]bonding.Bond, 0, max(n, 1))
	if a.ownedBonds == nil || len(a.ownedBonds) >= maxOwned {
		a.ownedBonds = make(map[*bonding.Bond]struct{})
		clear(a.bonds)
		a.bonds = a.bonds[:0]
	}
	a.ownedBonds[&arr[:1][0]] = struct{}{}
	return arr
}

// takeSlaves returns a copy of from in an array of its own.
func (a *readingArrays) takeSlaves(from []bonding.Slave) []bonding.Slave {
	if len(from) == 0 {
		return nil
	}
	if i := bestFit(a.slaves, len(from)); i >= 0 {
		arr := a.slaves[i]
		a.slaves = removeAt(a.slaves, i)
		return append(arr[:0], from...)
	}
	arr := make([]bonding.Slave, len(from))
	copy(arr, from)
	if a.ownedSlaves == nil || len(a.ownedSlaves) >= maxOwned {
		a.ownedSlaves = make(map[*bonding.Slave]struct{})
		clear(a.slaves)
		a.slaves = a.slaves[:0]
	}
	a.ownedSlaves[&arr[0]] = struct{}{}
	return arr
}

// put takes back the arrays of a reading: those take* made, once each.
func (a *readingArrays) put(bonds []bonding.Bond) {
	for i := range bonds {
		a.slaves = keepOwn(a.slaves, a.ownedSlaves, bonds[i].Slaves)
	}
	a.bonds = keepOwn(a.bonds, a.ownedBonds, bonds)
}

// keepOwn adds arr to free when owned has it and free does not yet. Its
// contents are cleared, so that a kept array holds no strings or values
// of readings past.
func keepOwn[T any](free [][]T, owned map[*T]struct{}, arr []T) [][]T {
	if cap(arr) == 0 {
		return free
	}
	first := &arr[:1][0]
	if _, ok := owned[first]; !ok || keeps(free, first) {
		return free
	}
	clear(arr[:cap(arr)])
	return append(free, arr[:0])
}

// bestFit is the index of the smallest array in arrs with room for n, or
// -1: a bond of two slaves leaves the array of four for the bond of four.
func bestFit[T any](arrs [][]T, n int) int {
	best := -1
	for i, arr := range arrs {
		if cap(arr) >= n && (best < 0 || cap(arr) < cap(arrs[best])) {
			best = i
		}
	}
	return best
}

// keeps reports whether the array whose first element is first is in
// arrs already.
func keeps[T any](arrs [][]T, first *T) bool {
	for _, arr := range arrs {
		if &arr[:1][0] == first {
			return true
		}
	}
	return false
}

// removeAt removes arrs[i], moving the last one into its place.
func removeAt[T any](arrs [][]T, i int) [][]T {
	last := len(arrs) - 1
	arrs[i] = arrs[last]
	arrs[last] = nil
	return arrs[:last]
}

// sameArray reports whether a and b share their first element: whether
// they are the same reading's bonds.
func sameArray(a, b []bonding.Bond) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}
