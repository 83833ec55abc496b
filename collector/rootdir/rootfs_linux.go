package rootdir

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

// localFileSystems are the file systems a tree's own mount may be on
// and be read with raw calls: memory (tmpfs, ramfs; procfs and sysfs,
// whose text the kernel makes as it is read) and local disks, where a
// tree's few small files, read every tick, stay in the page cache. None
// waits for a network or a user-space server. A tree is a directory
// holding proc/ and sys/: on a host's own /, those are other mounts,
// read with ordinary calls (RESOLVE_NO_XDEV below), and a driver asked
// for its counters there may sleep.
var localFileSystems = map[int64]bool{
	unix.PROC_SUPER_MAGIC: true, unix.SYSFS_MAGIC: true, unix.TMPFS_MAGIC: true, unix.RAMFS_MAGIC: true,
	unix.EXT4_SUPER_MAGIC: true, unix.XFS_SUPER_MAGIC: true, unix.BTRFS_SUPER_MAGIC: true,
	unix.F2FS_SUPER_MAGIC: true, unix.OVERLAYFS_SUPER_MAGIC: true,
}

// treeIsLocal reports whether the tree's directory is on a local file
// system. Its files are then read with raw system calls: the Go runtime
// is not told of them, so the first one of a tick does not wake its
// monitor thread (sysmon), which then polls every 20 µs for as long as
// the tick runs: a third of the dashboard's context switches at 100 ms.
// A raw call that blocks holds up every goroutine, so a tree on NFS, a
// FUSE mount or any other file system keeps the ordinary calls.
func treeIsLocal(dirfd int) bool {
	if dirfd < 0 {
		return false
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(dirfd, &st); err != nil {
		return false
	}
	return localFileSystems[int64(st.Type)]
}

// The system calls on a tree's files: raw (RawSyscall6, unseen by the
// scheduler) for a file on the tree's local mount (treeIsLocal), ordinary
// otherwise. Each converts its pointers in the system call's own argument
// list, as unsafe.Pointer's rules ask, so the objects stay put and alive
// until the call returns.

func openat2Call(raw bool, dirfd int, path *byte, how *unix.OpenHow) (int, syscall.Errno) {
	var fd uintptr
	var errno syscall.Errno
	if raw {
		fd, _, errno = unix.RawSyscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(path)),
			uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
	} else {
		fd, _, errno = unix.Syscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(path)),
			uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
	}
	return int(fd), errno
}

func fstatFile(raw bool, fd int, st *unix.Stat_t) error {
	var errno syscall.Errno
	if raw {
		_, _, errno = unix.RawSyscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	} else {
		_, _, errno = unix.Syscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// readFile reads into p, which is not empty.
func readFile(raw bool, fd int, p []byte) (int, syscall.Errno) {
	var n uintptr
	var errno syscall.Errno
	if raw {
		n, _, errno = unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	} else {
		n, _, errno = unix.Syscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	}
	return int(n), errno
}

// readLinkFD reads the link fd names (readlinkat with an empty path)
// into buf, which is not empty.
func readLinkFD(raw bool, fd int, buf []byte) (int, syscall.Errno) {
	var n uintptr
	var errno syscall.Errno
	if raw {
		n, _, errno = unix.RawSyscall6(unix.SYS_READLINKAT, uintptr(fd), uintptr(unsafe.Pointer(&emptyPath[0])),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	} else {
		n, _, errno = unix.Syscall6(unix.SYS_READLINKAT, uintptr(fd), uintptr(unsafe.Pointer(&emptyPath[0])),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	}
	return int(n), errno
}

func closeFile(raw bool, fd int) {
	if raw {
		unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	} else {
		unix.Syscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	}
}

// How the tree's files are opened: only beneath the tree, never through
// a magic link (/proc/self/fd/N); read-only without blocking on a FIFO to
// read, and as a bare path (O_PATH) to stat or to read a link. Each has a
// variant for raw calls, which also stays on the tree's own mount
// (RESOLVE_NO_XDEV): another mounted beneath it may be one that blocks
// (treeIsLocal). Package variables, so that passing their address to the
// system call allocates nothing.
//
// readQuietHow is readHow that leaves the file's access time alone
// (O_NOATIME). A tree on a disk is rewritten by whatever copies it, so
// under relatime every read finds its file's atime older than its mtime
// and writes the inode: at 100 ms on ext4 that was 8% of the
// dashboard's CPU time (measured on a --root tree before and after this
// flag), and a journal write for each file read. The kernel allows it to the file's
// owner and to root (CAP_FOWNER); anyone else is read with readHow.
var (
	readHow      = newOpenHow(readFlags)
	readQuietHow = newOpenHow(readFlags | unix.O_NOATIME)
	pathHow      = newOpenHow(unix.O_PATH | unix.O_CLOEXEC)
	linkHow      = newOpenHow(unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC)
)

const readFlags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY

// openHow is one way of opening, for ordinary and for raw calls.
type openHow struct {
	ordinary, raw unix.OpenHow
	noatime       bool // O_NOATIME, which only the file's owner may ask
}

func newOpenHow(flags uint64) openHow {
	how := unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	local := how
	local.Resolve |= unix.RESOLVE_NO_XDEV
	return openHow{ordinary: how, raw: local, noatime: flags&unix.O_NOATIME != 0}
}

// openBeneath opens name with one openat2: a root-source tick reads
// dozens of small files, and os.Root's walk costs an open and a close
// per path component. done is false when openat2 is not available; the
// caller then uses os.Root. A missing file is the bare syscall.ENOENT
// (see ReadFileScratch). raw says whether the file is to be read with
// raw calls: it is on the tree's mount, and the tree is local.
func (r *rootFS) openBeneath(op, name string, how *openHow) (fd int, raw, done bool, err error) {
	if r.dirfd < 0 || noOpenat2.Load() {
		return -1, false, false, nil
	}
	raw = r.raw
	if how.noatime && r.atimeRefused {
		how = &readHow
	}
	for {
		fd, err = r.openat2(name, how, raw)
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err == syscall.EPERM && how.noatime {
			// Not this user's file: read it as anyone may, and stop
			// asking for the tree's other files.
			r.atimeRefused = true
			how = &readHow
			continue
		}
		if err == syscall.EXDEV && raw {
			// Another mount beneath the tree, or a way out of it: the
			// ordinary call tells which, and what it opens is read
			// with ordinary calls.
			raw = false
			continue
		}
		break
	}
	switch {
	case err == syscall.ENOSYS || err == syscall.EPERM:
		noOpenat2.Store(true)
		return -1, false, false, nil
	case err == syscall.ENOENT:
		return -1, false, true, err
	case err == syscall.EXDEV:
		return -1, false, true, &fs.PathError{Op: op, Path: r.dir + "/" + name, Err: errOutside}
	case err != nil:
		return -1, false, true, &fs.PathError{Op: op, Path: r.dir + "/" + name, Err: err}
	}
	return fd, raw, true, nil
}

// openRegularBeneath opens name for reading (openBeneath) and checks
// that it is a regular file; the descriptor is closed on any error. size
// is what fstat says.
func (r *rootFS) openRegularBeneath(name string) (fd int, raw bool, size int64, done bool, err error) {
	fd, raw, done, err = r.openBeneath("open", name, &readQuietHow)
	if fd < 0 {
		return -1, false, 0, done, err
	}
	var st unix.Stat_t
	if err := fstatFile(raw, fd, &st); err != nil {
		closeFile(raw, fd)
		return -1, false, 0, true, &fs.PathError{Op: "stat", Path: r.dir + "/" + name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		closeFile(raw, fd)
		return -1, false, 0, true, r.notRegular(name, filekind.Of(fileMode(st.Mode)))
	}
	return fd, raw, st.Size, true, nil
}

// readBeneath reads name into r.buf: openat2, fstat, plain reads, close.
func (r *rootFS) readBeneath(name string) (n int, done bool, err error) {
	fd, raw, size, done, err := r.openRegularBeneath(name)
	if fd < 0 {
		return 0, done, err
	}
	defer closeFile(raw, fd)
	n, err = r.readCapped(name, size, func(p []byte) (int, error) {
		for {
			if len(p) == 0 {
				return 0, nil
			}
			m, errno := readFile(raw, fd, p)
			switch {
			case errno == syscall.EINTR:
				continue
			case errno != 0:
				return 0, errno
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
	fd, raw, done, err := r.openBeneath("stat", name, &pathHow)
	if fd < 0 {
		if err == syscall.ENOENT {
			err = &fs.PathError{Op: "stat", Path: r.dir + "/" + name, Err: err}
		}
		return nil, done, err
	}
	defer closeFile(raw, fd)
	var st unix.Stat_t
	if err := fstatFile(raw, fd, &st); err != nil {
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
	fd, raw, done, err := r.openBeneath("readlink", name, &linkHow)
	if fd < 0 {
		if err == syscall.ENOENT {
			err = &fs.PathError{Op: "readlink", Path: r.dir + "/" + name, Err: err}
		}
		return "", done, err
	}
	defer closeFile(raw, fd)
	if r.link == nil {
		r.link = make([]byte, 256)
	}
	for {
		n, errno := readLinkFD(raw, fd, r.link)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.ENOENT:
			// The empty path names fd itself, which is no link: what
			// readlink says of a file that is no link.
			return "", true, &fs.PathError{Op: "readlink", Path: r.dir + "/" + name, Err: syscall.EINVAL}
		case errno != 0:
			return "", true, &fs.PathError{Op: "readlink", Path: r.dir + "/" + name, Err: errno}
		case n == len(r.link) && len(r.link) < 64<<10:
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
// copy of it for every file of every tick. A raw open stays on the
// tree's mount (RESOLVE_NO_XDEV).
func (r *rootFS) openat2(name string, how *openHow, raw bool) (int, error) {
	r.path = append(append(r.path[:0], name...), 0)
	h := &how.ordinary
	if raw {
		h = &how.raw
	}
	fd, errno := openat2Call(raw, r.dirfd, &r.path[0], h)
	if errno != 0 {
		return -1, errno
	}
	return fd, nil
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
