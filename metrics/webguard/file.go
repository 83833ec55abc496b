package webguard

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/bondtop/bondtop/internal/filekind"
)

// maxFileSize bounds every file read for the web config: the config, the
// certificates, keys and client CAs it names. Real ones are a few
// kilobytes; a path that names something huge must fail, not fill the
// memory of a long-running process.
const maxFileSize = 1 << 20

// stamp is what a file looked like when it was read: a change of any of
// these is a reason to read it again.
type stamp struct {
	path  string
	ino   uint64
	size  int64
	mtime time.Time
	ctime time.Time
}

// readFile reads the regular file at path (following links, as config
// files are often links: a Kubernetes secret, /etc/alternatives) without
// ever blocking: it opens with O_NONBLOCK, so a FIFO swapped in for the
// file cannot wedge the open, checks on the open descriptor that it is a
// regular file (no race between a stat and the open), and reads at most
// maxFileSize bytes.
func readFile(path string) ([]byte, stamp, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, stamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return nil, stamp{}, fmt.Errorf("%s is %s, not a regular file", path, filekind.Of(fi.Mode()))
	}
	if fi.Size() > maxFileSize {
		return nil, stamp{}, fmt.Errorf("%s is %d bytes; a web config file or certificate is at most %d", path, fi.Size(), maxFileSize)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, stamp{}, err
	}
	if len(b) > maxFileSize {
		return nil, stamp{}, fmt.Errorf("%s grew past %d bytes while read", path, maxFileSize)
	}
	return b, stampOf(path, fi), nil
}

// statStamp stats path (following links) as readFile would see it; a
// stat never blocks, whatever the file is.
func statStamp(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{path: path}, err
	}
	return stampOf(path, fi), nil
}

func stampOf(path string, fi os.FileInfo) stamp {
	s := stamp{path: path, size: fi.Size(), mtime: fi.ModTime()}
	s.ino, s.ctime = inodeTimes(fi)
	return s
}

// changed reports whether any of the files differs from its stamp (or
// can no longer be stat'ed, or now can).
func changed(stamps []stamp) bool {
	for _, s := range stamps {
		now, err := statStamp(s.path)
		if err != nil {
			if s.ino != 0 || s.size != 0 || !s.mtime.IsZero() {
				return true
			}
			continue
		}
		if now != s {
			return true
		}
	}
	return false
}
