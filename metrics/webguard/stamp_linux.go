package webguard

import (
	"os"
	"syscall"
	"time"
)

// inodeTimes are the inode number and change time: a file replaced by a
// rename, or rewritten within one mtime tick, still shows as changed.
func inodeTimes(fi os.FileInfo) (uint64, time.Time) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, time.Time{}
	}
	return st.Ino, time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
}
