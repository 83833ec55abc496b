//go:build !linux

package rootdir

import "io/fs"

// Without openat2, os.Root resolves every path beneath the tree.

func openDirFD(string) int { return -1 }

func closeDirFD(int) {}

func treeIsLocal(int) bool { return false }

func (r *rootFS) readBeneath(string) (int, bool, error) { return 0, false, nil }

func (r *rootFS) statBeneath(string) (fs.FileInfo, bool, error) { return nil, false, nil }

func (r *rootFS) readLinkBeneath(string) (string, bool, error) { return "", false, nil }
