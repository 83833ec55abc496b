package collector

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// readSmallFile reads the whole file at path into *buf (grown as needed)
// with plain open/read/close: os.Open would also stat the file and try to
// register it with the runtime's poller, two more system calls per file,
// and a root-source tick reads dozens of small files.
func readSmallFile(path string, buf *[]byte) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	n := 0
	for {
		if n == len(*buf) {
			*buf = append(*buf, make([]byte, len(*buf))...)
		}
		m, err := unix.Read(fd, (*buf)[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			return n, nil
		}
		n += m
	}
}
