package rootdir

import (
	"io/fs"
	"path"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kept files: an interface's statistics/ is ten small files read on
// every tick, and opening them was a fifth of the dashboard's CPU on a
// tree at 100 ms (the path walk and the file's setup in the kernel), for
// files whose place never moves. They stay open from tick to tick and
// are read again from their start with one pread each: a sysfs
// attribute makes its text anew on every read from offset 0, and a file
// of a tree written in place (a test's tree, a copy refreshed by a
// script) shows its new content.
//
// A file replaced rather than rewritten (renamed over, its directory
// swapped for another or for a link out of the tree, an interface gone
// and back) would go on showing the old one through a kept descriptor.
// So its directory is looked at first, every tick (one openat2 with
// O_PATH and an fstat, beneath the tree like every open): its device,
// inode and change time (which a rename or an unlink in it moves) must be
// those it had when the files were opened, or they are closed and opened
// again. A directory changed within the last keepQuiet is not trusted
// even then: its change time may not have moved yet for a change in the
// same tick of the kernel's clock, so its files are opened as before
// until it has been quiet that long.

// keepQuiet is how long a directory must have been unchanged for its
// files to be kept open. The kernel stamps times from a clock that
// advances every few milliseconds; a second is far beyond that.
const keepQuiet = time.Second

// Kept descriptors are bounded by what they cost. A file of a tree on a
// disk or tmpfs (a copy of a host's /proc and /sys: what --root is for)
// costs the kernel its open file, a few hundred bytes, so the files of
// 64 bonds of 8 slaves (5,760) are all kept: reading them with one pread
// each rather than open, fstat, read and close roughly halves the
// dashboard's CPU at 1 s on such a tree (docs/performance.md). A sysfs
// attribute kept open holds a page of the kernel's once read, so a tree
// that is the live /sys keeps at most maxKeptSysfs of them; and no tree
// takes more than half the process's descriptor limit (keepLimit), so
// that the sockets and files of the rest of the program always open.
const (
	maxKeptFiles = 8192
	maxKeptSysfs = 512
)

// sysfsMagic is the f_type statfs reports for sysfs.
const sysfsMagic = 0x62656572

// keepLimit is how many descriptors the kept files may take in all:
// maxKeptFiles, or half the soft RLIMIT_NOFILE when that is lower.
func keepLimit() int {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil {
		return maxKeptSysfs
	}
	return int(min(uint64(maxKeptFiles), rl.Cur/2))
}

// keptDir is one directory whose files are kept open.
type keptDir struct {
	stamp   dirStamp
	trusted bool // unchanged for keepQuiet: reads may use files
	files   map[string]heldFD
	seen    uint64 // the tick that last asked for it
	// sysfs: the directory is on sysfs (its files are capped at
	// maxKeptSysfs), as statfs said when it was first checked.
	sysfs bool
}

// heldFD is a kept descriptor, and whether it is read with raw calls.
type heldFD struct {
	fd  int
	raw bool
}

// dirStamp is what changes when a directory's entries do.
type dirStamp struct {
	dev, ino uint64
	ctime    unix.Timespec
}

// keepDir checks dir at the start of its reads on this tick: kept files
// are closed when it is not the directory they were opened in, and kept
// reads (ReadKeptScratch) of its files are allowed only when it has been
// unchanged for keepQuiet. A directory that cannot be opened lets its
// files be read the ordinary way, which says what is wrong.
func (r *rootFS) keepDir(dir string, tick uint64) {
	kd := r.kept[dir]
	if kd == nil {
		if r.dirfd < 0 || noOpenat2.Load() {
			return
		}
		if r.kept == nil {
			r.kept = make(map[string]*keptDir)
		}
		if r.keepLimit == 0 {
			r.keepLimit = keepLimit()
		}
		kd = &keptDir{files: make(map[string]heldFD), sysfs: r.onSysfs(dir)}
		r.kept[dir] = kd
	}
	kd.seen = tick
	stamp, ok := r.stampDir(dir)
	kd.trusted = ok && r.now().After(time.Unix(stamp.ctime.Unix()).Add(keepQuiet))
	if !kd.trusted || stamp != kd.stamp {
		r.closeKept(kd)
		kd.stamp = stamp
	}
}

// stampDir is dir's stamp, opened beneath the tree as any other path.
func (r *rootFS) stampDir(dir string) (dirStamp, bool) {
	fd, raw, _, err := r.openBeneath("stat", dir, &pathHow)
	if fd < 0 || err != nil {
		return dirStamp{}, false
	}
	defer closeFile(raw, fd)
	var st unix.Stat_t
	if fstatFile(raw, fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return dirStamp{}, false
	}
	return dirStamp{dev: st.Dev, ino: st.Ino, ctime: st.Ctim}, true
}

// onSysfs says whether dir is on sysfs; true when statfs cannot tell, so
// that such a directory's files take the lower cap.
func (r *rootFS) onSysfs(dir string) bool {
	fd, raw, _, err := r.openBeneath("stat", dir, &pathHow)
	if fd < 0 || err != nil {
		return true
	}
	defer closeFile(raw, fd)
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return true
	}
	return st.Type == sysfsMagic
}

// ReadKeptScratch is ReadFileScratch for a file whose directory keepDir
// checked on this tick: through a descriptor kept open when the directory
// allows it, else opened as ReadFileScratch does.
func (r *rootFS) ReadKeptScratch(name string) ([]byte, error) {
	kd := r.kept[path.Dir(name)]
	if kd == nil || !kd.trusted || !fs.ValidPath(name) {
		return r.ReadFileScratch(name)
	}
	base := path.Base(name)
	f, ok := kd.files[base]
	if !ok {
		if r.keptFiles >= r.keepLimit || (kd.sysfs && r.keptFiles >= maxKeptSysfs) {
			return r.ReadFileScratch(name)
		}
		fd, raw, _, done, err := r.openRegularBeneath(name)
		if !done {
			return r.ReadFileScratch(name)
		}
		if err != nil {
			return nil, err
		}
		f = heldFD{fd: fd, raw: raw}
		kd.files[base] = f
		r.keptFiles++
	}
	n, err := r.preadAll(f)
	if err != nil {
		// The file went (a sysfs attribute of a device removed answers
		// ENODEV) or broke: drop it, and let an ordinary read say what
		// is there now.
		closeFile(f.raw, f.fd)
		delete(kd.files, base)
		r.keptFiles--
		return r.ReadFileScratch(name)
	}
	return r.buf[:n], nil
}

// preadAll reads f from its start into r.buf, up to maxTreeFile. A read
// that returns less than it was given is the end: a kept file is a
// regular file, on a disk or a kernel attribute whose text comes whole.
func (r *rootFS) preadAll(f heldFD) (int, error) {
	if r.buf == nil {
		r.buf = make([]byte, 4096)
	}
	n := 0
	for {
		if n == len(r.buf) && !r.growBuf() {
			return 0, errTooLarge
		}
		m, errno := preadFile(f.raw, f.fd, r.buf[n:], int64(n))
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		n += m
		if m < len(r.buf)-(n-m) {
			return n, nil
		}
	}
}

func preadFile(raw bool, fd int, p []byte, off int64) (int, syscall.Errno) {
	var n uintptr
	var errno syscall.Errno
	if raw {
		n, _, errno = unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(off), 0, 0)
	} else {
		n, _, errno = unix.Syscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(off), 0, 0)
	}
	return int(n), errno
}

// sweepKept closes the kept files of directories no read asked for on
// this tick (an interface gone from the bond).
func (r *rootFS) sweepKept(tick uint64) {
	r.dropKept(func(kd *keptDir) bool { return kd.seen != tick })
}

// dropKept forgets the directories gone says are gone, closing their files.
func (r *rootFS) dropKept(gone func(*keptDir) bool) {
	for dir, kd := range r.kept {
		if gone(kd) {
			r.closeKept(kd)
			delete(r.kept, dir)
		}
	}
}

func (r *rootFS) closeKept(kd *keptDir) {
	for base, f := range kd.files {
		closeFile(f.raw, f.fd)
		delete(kd.files, base)
		r.keptFiles--
	}
}

// closeAllKept closes every kept file (Close).
func (r *rootFS) closeAllKept() { r.dropKept(func(*keptDir) bool { return true }) }
