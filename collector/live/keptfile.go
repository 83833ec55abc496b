package live

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// keptFileStart is a keptFile's first buffer: a 4-slave 802.3ad bond's
// /proc/net/bonding file is about 3 KiB.
const keptFileStart = 8 << 10

// keptFileMax bounds what a keptFile reads: a bond's procfs file is a few
// KiB per slave.
const keptFileMax = 4 << 20

// keptFile reads a file the kernel generates on each read (a procfs
// seq_file such as /proc/net/bonding/<bond>) over and over, for the live
// source's every tick: opened once and kept open, then read whole from
// offset 0 with pread into a buffer kept across reads, which for a
// seq_file generates the text anew (seq_file supports pread since 2.6.30).
// That is two system calls a read (the text, then the end of it) instead
// of open, fstat, the reads, and close. A file the kernel removed (the
// bond was deleted or renamed) answers EIO: it is opened by its name
// again. Files of other file systems than the OS's (tests' fstest.MapFS
// hands out a snapshot per Open) are opened and read anew each time.
type keptFile struct {
	f   *os.File // open between reads; nil before the first and after close
	buf []byte
}

// read returns the whole text of fsys's file name, in a buffer that the
// next read reuses.
func (k *keptFile) read(fsys fs.FS, name string) ([]byte, error) {
	reopened := false
	for {
		if k.f == nil {
			f, err := fsys.Open(name)
			if err != nil {
				return nil, err
			}
			of, ok := f.(*os.File)
			if !ok {
				defer f.Close()
				return k.readAll(name, f)
			}
			k.f, reopened = of, true
		}
		data, err := k.readAt(name)
		if err == nil || reopened {
			if err != nil {
				k.close()
			}
			return data, err
		}
		k.close()
	}
}

// readAt reads the kept file from offset 0 to its end, growing the
// buffer until the text fits.
func (k *keptFile) readAt(name string) ([]byte, error) {
	if len(k.buf) == 0 {
		k.buf = make([]byte, keptFileStart)
	}
	for {
		n, err := k.f.ReadAt(k.buf, 0)
		switch {
		case err == io.EOF:
			return k.buf[:n], nil
		case err != nil:
			return nil, err
		case len(k.buf) >= keptFileMax:
			return nil, fmt.Errorf("%s: larger than %d bytes", name, keptFileMax)
		}
		// The text filled the buffer: it may go on.
		k.buf = make([]byte, 2*len(k.buf))
	}
}

// readAll reads an open file of another file system to its end.
func (k *keptFile) readAll(name string, f fs.File) ([]byte, error) {
	n := 0
	for {
		if n == len(k.buf) {
			if n >= keptFileMax {
				return nil, fmt.Errorf("%s: larger than %d bytes", name, keptFileMax)
			}
			k.buf = append(k.buf, make([]byte, max(n, keptFileStart))...)
		}
		m, err := f.Read(k.buf[n:])
		n += m
		switch {
		case err == io.EOF:
			return k.buf[:n], nil
		case err != nil:
			return nil, err
		}
	}
}

// close closes the kept file; the next read opens it again.
func (k *keptFile) close() {
	if k.f != nil {
		_ = k.f.Close()
		k.f = nil
	}
}
