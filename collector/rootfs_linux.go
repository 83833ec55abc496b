package collector

import (
	"errors"
	"io"
	"io/fs"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/internal/filekind"
)

// noOpenat2 is set once openat2 turned out to be missing (Linux before
// 5.6) or filtered (seccomp): os.Root then does every open.
var noOpenat2 atomic.Bool

// errOutside is the reason a path that leads out of the tree is refused.
var errOutside = errors.New("leads out of the --root tree (through a symbolic link or ..): not followed")

// openDirFD opens the tree's directory for openat2; -1 when it cannot.
func openDirFD(dir string) int {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

func closeDirFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// beneathHow is how readBeneath opens: read-only, without blocking on a
// FIFO, and only beneath the tree. A package variable, so that passing
// its address to the system call allocates nothing.
var beneathHow = unix.OpenHow{
	Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY,
	Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
}

// readBeneath reads name into r.buf with one openat2(RESOLVE_BENEATH),
// fstat and plain reads: a root-source tick reads dozens of small files,
// and os.Root's walk costs an open and a close per path component. done
// is false when openat2 is not available; the caller then uses os.Root.
// A missing file is the bare syscall.ENOENT (see readScratch).
func (r *rootFS) readBeneath(name string) (n int, done bool, err error) {
	if r.dirfd < 0 || noOpenat2.Load() {
		return 0, false, nil
	}
	fd, err := r.openat2(name)
	for err == syscall.EINTR || err == syscall.EAGAIN {
		fd, err = r.openat2(name)
	}
	switch {
	case err == syscall.ENOSYS || err == syscall.EPERM:
		noOpenat2.Store(true)
		return 0, false, nil
	case err == syscall.ENOENT:
		return 0, true, err
	case err == syscall.EXDEV:
		return 0, true, &fs.PathError{Op: "open", Path: r.dir + "/" + name, Err: errOutside}
	case err != nil:
		return 0, true, &fs.PathError{Op: "open", Path: r.dir + "/" + name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, true, &fs.PathError{Op: "stat", Path: r.dir + "/" + name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, true, r.notRegular(name, filekind.Of(fileMode(st.Mode)))
	}
	n, err = r.readCapped(name, st.Size, func(p []byte) (int, error) {
		for {
			m, err := unix.Read(fd, p)
			switch {
			case err == syscall.EINTR:
				continue
			case err != nil:
				return 0, err
			case m == 0:
				return 0, io.EOF
			}
			return m, nil
		}
	})
	return n, true, err
}

// openat2 opens name beneath the tree. The path goes to the kernel from
// a buffer the rootFS reuses: unix.Openat2 would allocate a NUL-terminated
// copy of it for every file of every tick.
func (r *rootFS) openat2(name string) (int, error) {
	r.path = append(append(r.path[:0], name...), 0)
	fd, _, errno := unix.Syscall6(unix.SYS_OPENAT2, uintptr(r.dirfd), uintptr(unsafe.Pointer(&r.path[0])),
		uintptr(unsafe.Pointer(&beneathHow)), unsafe.Sizeof(beneathHow), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// fileMode turns the type bits of a stat mode into an fs.FileMode.
func fileMode(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return 0
}
