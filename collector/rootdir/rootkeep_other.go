//go:build !linux

package rootdir

// Elsewhere every read opens its file (rootkeep_linux.go keeps them).

type keptDir struct{}

func (r *rootFS) keepDir(string, uint64) {}

func (r *rootFS) ReadKeptScratch(name string) ([]byte, error) { return r.ReadFileScratch(name) }

func (r *rootFS) sweepKept(uint64) {}

func (r *rootFS) closeAllKept() {}
