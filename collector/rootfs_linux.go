package collector

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"sync/atomic"
	"syscall"
	"time"
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

// How the tree's files are opened: only beneath the tree, never through
// a magic link (/proc/self/fd/N); read-only without blocking on a FIFO to
// read, and as a bare path (O_PATH) to stat or to read a link. Package
// variables, so that passing their address to the system call allocates
// nothing.
var (
	readHow = unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	pathHow = unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	linkHow = unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
)

// openBeneath opens name with one openat2: a root-source tick reads
// dozens of small files, and os.Root's walk costs an open and a close
// per path component. done is false when openat2 is not available; the
// caller then uses os.Root. A missing file is the bare syscall.ENOENT
// (see ReadFileScratch).
func (r *rootFS) openBeneath(op, name string, how *unix.OpenHow) (fd int, done bool, err error) {
	if r.dirfd < 0 || noOpenat2.Load() {
		return -1, false, nil
	}
	fd, err = r.openat2(name, how)
	for err == syscall.EINTR || err == syscall.EAGAIN {
		fd, err = r.openat2(name, how)
	}
	switch {
	case err == syscall.ENOSYS || err == syscall.EPERM:
		noOpenat2.Store(true)
		return -1, false, nil
	case err == syscall.ENOENT:
		return -1, true, err
	case err == syscall.EXDEV:
		return -1, true, &fs.PathError{Op: op, Path: r.dir + "/" + name, Err: errOutside}
	case err != nil:
		return -1, true, &fs.PathError{Op: op, Path: r.dir + "/" + name, Err: err}
	}
	return fd, true, nil
}

// readBeneath reads name into r.buf: openat2, fstat, plain reads, close.
func (r *rootFS) readBeneath(name string) (n int, done bool, err error) {
	fd, done, err := r.openBeneath("open", name, &readHow)
	if fd < 0 {
		return 0, done, err
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

// statBeneath is Stat with openat2(O_PATH) and fstat: three system calls
// where os.Root opens and closes every directory on the way.
func (r *rootFS) statBeneath(name string) (fs.FileInfo, bool, error) {
	fd, done, err := r.openBeneath("stat", name, &pathHow)
	if fd < 0 {
		if err == syscall.ENOENT {
			err = &fs.PathError{Op: "stat", Path: r.dir + "/" + name, Err: err}
		}
		return nil, done, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, true, &fs.PathError{Op: "stat", Path: r.dir + "/" + name, Err: err}
	}
	return &statInfo{
		name:  path.Base(name),
		size:  st.Size,
		mode:  fileMode(st.Mode) | fs.FileMode(st.Mode&0o777),
		mtime: time.Unix(st.Mtim.Unix()),
	}, true, nil
}

// readLinkBeneath is ReadLink with openat2(O_PATH|O_NOFOLLOW), which
// opens the link itself, and readlinkat on it.
func (r *rootFS) readLinkBeneath(name string) (string, bool, error) {
	fd, done, err := r.openBeneath("readlink", name, &linkHow)
	if fd < 0 {
		if err == syscall.ENOENT {
			err = &fs.PathError{Op: "readlink", Path: r.dir + "/" + name, Err: err}
		}
		return "", done, err
	}
	defer unix.Close(fd)
	if r.link == nil {
		r.link = make([]byte, 256)
	}
	for {
		n, _, errno := unix.Syscall6(unix.SYS_READLINKAT, uintptr(fd), uintptr(unsafe.Pointer(&emptyPath[0])),
			uintptr(unsafe.Pointer(&r.link[0])), uintptr(len(r.link)), 0, 0)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.ENOENT:
			// The empty path names fd itself, which is no link: what
			// readlink says of a file that is no link.
			return "", true, &fs.PathError{Op: "readlink", Path: r.dir + "/" + name, Err: syscall.EINVAL}
		case errno != 0:
			return "", true, &fs.PathError{Op: "readlink", Path: r.dir + "/" + name, Err: errno}
		case int(n) == len(r.link) && len(r.link) < 64<<10:
			r.link = make([]byte, 2*len(r.link)) // maybe cut short: again, with room
			continue
		}
		return string(r.link[:n]), true, nil
	}
}

// emptyPath is the NUL-terminated "" that makes readlinkat read the link
// its descriptor names.
var emptyPath = [1]byte{0}

// openat2 opens name beneath the tree. The path goes to the kernel from
// a buffer the rootFS reuses: unix.Openat2 would allocate a NUL-terminated
// copy of it for every file of every tick.
func (r *rootFS) openat2(name string, how *unix.OpenHow) (int, error) {
	r.path = append(append(r.path[:0], name...), 0)
	fd, _, errno := unix.Syscall6(unix.SYS_OPENAT2, uintptr(r.dirfd), uintptr(unsafe.Pointer(&r.path[0])),
		uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// statInfo is what statBeneath found.
type statInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

func (i *statInfo) Name() string       { return i.name }
func (i *statInfo) Size() int64        { return i.size }
func (i *statInfo) Mode() fs.FileMode  { return i.mode }
func (i *statInfo) ModTime() time.Time { return i.mtime }
func (i *statInfo) IsDir() bool        { return i.mode.IsDir() }
func (i *statInfo) Sys() any           { return nil }

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
