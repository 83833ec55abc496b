package webconfig

import (
	"os"
	"syscall"
	"time"
)

// racyWindow: a file modified this shortly before it was read may be
// modified again without its stamp changing (a file system's clock ticks
// in milliseconds, and an in-place rewrite of the same size keeps the
// inode), so such a read is not trusted: the files are read again on the
// next use, until they are older than this.
const racyWindow = 2 * time.Second

// stamp is what a stat tells of a file, enough to see that it changed
// without reading it: replaced (a new inode, as an atomic rename or a
// retargeted symbolic link makes), rewritten (size, modification time) or
// gone.
type stamp struct {
	path     string
	ok       bool // stat succeeded; the rest is set only then
	dev, ino uint64
	size     int64
	mtime    int64 // ns since the epoch
}

func stampOf(path string, fi os.FileInfo, err error) stamp {
	s := stamp{path: path}
	if err != nil {
		return s
	}
	s.ok, s.size, s.mtime = true, fi.Size(), fi.ModTime().UnixNano()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino = uint64(st.Dev), st.Ino
	}
	return s
}

// unchanged reports whether every file still has its stamp: a stat each,
// no read. No stamps (nothing read yet) counts as changed.
func unchanged(stamps []stamp) bool {
	if len(stamps) == 0 {
		return false
	}
	for _, s := range stamps {
		fi, err := os.Stat(s.path)
		if stampOf(s.path, fi, err) != s {
			return false
		}
	}
	return true
}

// racy reports whether a file was modified within racyWindow of start
// (when it was read), or after it: its stamp cannot be trusted yet.
func racy(stamps []stamp, start time.Time) bool {
	limit := start.Add(-racyWindow).UnixNano()
	for _, s := range stamps {
		if s.ok && s.mtime >= limit {
			return true
		}
	}
	return false
}
