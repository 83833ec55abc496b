//go:build !linux

package collector

// Without openat2, os.Root resolves every path beneath the tree.

func openDirFD(string) int { return -1 }

func closeDirFD(int) {}

func (r *rootFS) readBeneath(string) (int, bool, error) { return 0, false, nil }
