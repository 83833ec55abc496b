package rootdir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/filekind"
)

// maxTreeFile bounds what is read of one file of a --root tree: the
// largest real procfs or sysfs file of a bond (a /proc/net/bonding report
// of a bond with hundreds of slaves, /proc/net/dev of thousands of
// interfaces) stays far below it, and a huge or endless file (a link to
// /dev/zero) costs no more than this.
const maxTreeFile = 1 << 20

// errNotRegular and errTooLarge are the reasons a tree file is refused.
var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = fmt.Errorf("larger than %d KiB, far more than any procfs or sysfs file: not read", maxTreeFile>>10)
)

// rootFS is the file system of a --root tree, which may come from another
// host and is not trusted: every path is resolved beneath the tree
// (symbolic links that lead out of it are refused, not followed), only
// regular files are read (a FIFO or a device is refused without blocking),
// and a read stops at maxTreeFile. On Linux one openat2(RESOLVE_BENEATH)
// opens a file; elsewhere, or on kernels without openat2, os.Root does the
// same walk one component at a time.
//
// A file costs four system calls: openat2, fstat, one read (an on-disk
// file's size says when the end is reached; procfs and sysfs files, whose
// size says nothing, take a read more) and close. The statistics files,
// ten an interface read every tick, are the exception: their descriptors
// are kept from one tick to the next, each read is one pread, and their
// directory is checked every tick for a file replaced by rename
// (rootkeep_linux.go).
// On a local file system they are raw system calls (treeIsLocal), which
// spare the Go runtime's monitor thread a wake-up and 20 µs polling for
// the rest of every tick.
//
// Reads go into one buffer (ReadFileScratch hands it out, ReadFile copies
// it), so a rootFS is not safe for concurrent use: one Source serves
// one Sampler.
type rootFS struct {
	root  *os.Root
	dir   string
	dirfd int // the tree's directory for openat2; -1 when not used
	// raw: the tree is on a local file system (treeIsLocal), so its
	// files are opened and read with raw system calls, which the Go
	// scheduler does not see (rootfs_linux.go).
	raw  bool
	buf  []byte
	path []byte // the NUL-terminated path being opened (Linux)
	link []byte // the text of the link being read (Linux)
	// atimeRefused: the kernel refused O_NOATIME on one of the tree's
	// files (another user's), so openBeneath asks for it no more (Linux).
	atimeRefused bool

	// kept are directories whose files stay open between ticks, with
	// keptFiles descriptors in all (rootkeep_linux.go); now is the
	// clock that says how long a directory has been unchanged.
	kept      map[string]*keptDir
	keptFiles int
	keepLimit int // the cap of keptFiles, set when a first directory is kept
	now       func() time.Time
}

var _ bonding.ScratchFS = (*rootFS)(nil)

func openRootFS(dir string) (*rootFS, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	fd := openDirFD(dir)
	return &rootFS{root: root, dir: dir, dirfd: fd, raw: treeIsLocal(fd), now: time.Now}, nil
}

func (r *rootFS) Close() error {
	r.closeAllKept()
	closeDirFD(r.dirfd)
	return r.root.Close()
}

// Open opens name beneath the tree without blocking on a FIFO.
func (r *rootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return r.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// Stat follows symbolic links only as long as they stay in the tree.
func (r *rootFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if fi, done, err := r.statBeneath(name); done {
		return fi, err
	}
	return r.root.Stat(name)
}

// ReadLink returns a symbolic link's text (sysfs names a slave's PCI
// device by its link); the path to it resolves inside the tree.
func (r *rootFS) ReadLink(name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	if target, done, err := r.readLinkBeneath(name); done {
		return target, err
	}
	return r.root.Readlink(name)
}

// Lstat is Stat of the link itself.
func (r *rootFS) Lstat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrInvalid}
	}
	return r.root.Lstat(name)
}

// ReadDir lists a directory of the tree, sorted by name.
func (r *rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	entries, err := d.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// ReadFile reads a regular file of the tree, at most maxTreeFile bytes.
func (r *rootFS) ReadFile(name string) ([]byte, error) {
	data, err := r.ReadFileScratch(name)
	if err != nil {
		if err == syscall.ENOENT {
			err = &fs.PathError{Op: "open", Path: r.dir + "/" + name, Err: err}
		}
		return nil, err
	}
	return bytes.Clone(data), nil
}

// ReadFileScratch is ReadFile into the rootFS's own buffer (a rootFS is
// a bonding.ScratchFS): the bytes are valid until the next read. A tick
// reads dozens of small files whose text is parsed at once, and a copy of
// each would be garbage a moment later. A missing file is the bare syscall.ENOENT (errors.Is it
// fs.ErrNotExist), without its name: a tree lacks some files on every
// tick (statistics of a bond without them, /proc/net/dev), and callers
// that skip such files would build the error only to drop it.
func (r *rootFS) ReadFileScratch(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	if r.buf == nil {
		r.buf = make([]byte, 4096)
	}
	n, done, err := r.readBeneath(name)
	if !done {
		n, err = r.readViaRoot(name)
	}
	if err != nil {
		return nil, err
	}
	return r.buf[:n], nil
}

// readViaRoot is ReadFile through os.Root.
func (r *rootFS) readViaRoot(name string) (int, error) {
	f, err := r.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, r.notRegular(name, filekind.Of(st.Mode()))
	}
	return r.readCapped(name, st.Size(), f.Read)
}

// growBuf doubles r.buf, full of what was read, up to one byte past
// maxTreeFile (that byte says the file is larger); false once it is.
func (r *rootFS) growBuf() bool {
	if len(r.buf) > maxTreeFile {
		return false
	}
	r.buf = append(r.buf, make([]byte, min(len(r.buf), maxTreeFile+1-len(r.buf)))...)
	return true
}

func (r *rootFS) notRegular(name, kind string) error {
	return &fs.PathError{Op: "open", Path: r.dir + "/" + name, Err: fmt.Errorf("%w (%s)", errNotRegular, kind)}
}

// readCapped reads into r.buf, growing it, until the end of the file or
// maxTreeFile bytes. size is what fstat said: an on-disk file's length,
// so once that much is read the end is reached and the read that would
// return 0 is skipped (one system call less per file); procfs and sysfs
// say 0 or 4096 whatever they hold, so for them, and for a file that
// grew since, reading goes on until a read returns 0.
func (r *rootFS) readCapped(name string, size int64, read func([]byte) (int, error)) (int, error) {
	if size > maxTreeFile {
		return 0, &fs.PathError{Op: "read", Path: r.dir + "/" + name, Err: errTooLarge}
	}
	if int(size) >= len(r.buf) {
		// Room for the whole file and one byte more, so that a file
		// that grew is noticed without a second growth.
		r.buf = slices.Grow(r.buf[:0], int(size)+1)[:int(size)+1]
	}
	n := 0
	for {
		if n == len(r.buf) && !r.growBuf() {
			return 0, &fs.PathError{Op: "read", Path: r.dir + "/" + name, Err: errTooLarge}
		}
		m, err := read(r.buf[n:])
		n += m
		if err == io.EOF || (err == nil && m == 0) {
			return n, nil
		}
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: r.dir + "/" + name, Err: err}
		}
		if size > 0 && int64(n) == size {
			return n, nil
		}
	}
}
