// Package recycle keeps the arrays of the Readings a Sampler handed back
// (collector.Recycler), for a source's next Read to fill: a steady tick
// then allocates no reading. The live and the --root sources use it.
package recycle

import "github.com/bondtop/bondtop/bonding"

// Arrays are the arrays of the readings a Sampler has let go (the bonds'
// array, each bond's slaves), kept for the next Read. The zero value is
// ready. A source that has one implements collector.Recycler with Put.
type Arrays struct {
	bonds  freeArrays[bonding.Bond]
	slaves freeArrays[bonding.Slave]
}

// TakeBonds returns an empty array with room for n bonds.
func (a *Arrays) TakeBonds(n int) []bonding.Bond { return a.bonds.take(n) }

// TakeSlaves returns a copy of from in an array of its own.
func (a *Arrays) TakeSlaves(from []bonding.Slave) []bonding.Slave {
	if len(from) == 0 {
		return nil
	}
	return append(a.slaves.take(len(from)), from...)
}

// Put takes back the arrays of a reading: those Take* made, once each.
func (a *Arrays) Put(bonds []bonding.Bond) {
	for i := range bonds {
		a.slaves.put(bonds[i].Slaves)
	}
	a.bonds.put(bonds)
}

// freeArrays are arrays of T kept for reuse.
//
// It takes back only the arrays it made itself (take): a reading's slaves
// may be a cache's own array (a bond merged from the files is kept as it
// was made, for the ticks whose inputs are the same), and that one must
// never be written again.
type freeArrays[T any] struct {
	free [][]T
	// owned are the first elements of the arrays take made. It is
	// bounded: past maxOwned (a source whose readings are rebuilt
	// elsewhere, whose arrays never come back) it is forgotten with the
	// free arrays, which only costs the reuse of the arrays still out.
	owned map[*T]struct{}
}

// maxOwned bounds the arrays a freeArrays remembers making: a Sampler
// holds at most two readings besides the one being read, and a host has
// at most a few hundred bonds.
const maxOwned = 4096

// take returns an empty array with room for n: the smallest free one that
// fits (a bond of two slaves leaves the array of four for the bond of
// four), or a new one.
func (f *freeArrays[T]) take(n int) []T {
	best := -1
	for i, arr := range f.free {
		if cap(arr) >= n && (best < 0 || cap(arr) < cap(f.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		arr := f.free[best]
		last := len(f.free) - 1
		f.free[best], f.free[last] = f.free[last], nil
		f.free = f.free[:last]
		return arr
	}
	arr := make([]T, 0, max(n, 1))
	if f.owned == nil || len(f.owned) >= maxOwned {
		f.owned = make(map[*T]struct{})
		clear(f.free)
		f.free = f.free[:0]
	}
	f.owned[firstOf(arr)] = struct{}{}
	return arr
}

// put keeps arr when take made it and it is not kept yet. Its contents
// are cleared, so that a kept array holds no strings or values of
// readings past.
func (f *freeArrays[T]) put(arr []T) {
	if cap(arr) == 0 {
		return
	}
	first := firstOf(arr)
	if _, ok := f.owned[first]; !ok {
		return
	}
	for _, kept := range f.free {
		if firstOf(kept) == first {
			return
		}
	}
	clear(arr[:cap(arr)])
	f.free = append(f.free, arr[:0])
}

// firstOf is the first element of arr's array (arr may be empty; its
// capacity may not be): two slices share an array when they share it.
func firstOf[T any](arr []T) *T { return &arr[:1][0] }
