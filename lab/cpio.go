package lab

import (
	"fmt"
	"io"
	"strings"
)

// CPIOWriter writes an archive in the "newc" format (magic 070701), the
// one the kernel unpacks as an initramfs. It knows only what an initramfs
// needs: directories and regular files, no hard links or device nodes
// (devtmpfs provides /dev in the guest).
type CPIOWriter struct {
	w     io.Writer
	ino   uint32
	err   error
	wrote int64
}

// NewCPIOWriter returns a writer that appends entries to w.
func NewCPIOWriter(w io.Writer) *CPIOWriter { return &CPIOWriter{w: w, ino: 1} }

// Mode bits of the entries, as in stat(2).
const (
	cpioDir  = 0o040000
	cpioFile = 0o100000
)

// Dir adds a directory. Parents must be added first: the kernel does not
// create them.
func (c *CPIOWriter) Dir(name string, perm uint32) error {
	return c.entry(name, cpioDir|perm, nil)
}

// File adds a regular file holding data.
func (c *CPIOWriter) File(name string, perm uint32, data []byte) error {
	return c.entry(name, cpioFile|perm, data)
}

// Close writes the trailer entry that ends the archive. It does not close
// the underlying writer.
func (c *CPIOWriter) Close() error {
	return c.entry("TRAILER!!!", 0, nil)
}

func (c *CPIOWriter) entry(name string, mode uint32, data []byte) error {
	if c.err != nil {
		return c.err
	}
	name = strings.TrimPrefix(name, "/")
	nlink := 1
	if mode&cpioDir != 0 {
		nlink = 2
	}
	ino := c.ino
	if name == "TRAILER!!!" {
		ino = 0
	}
	c.ino++
	// 13 fields of 8 hex digits after the magic: ino, mode, uid, gid,
	// nlink, mtime, filesize, devmajor, devminor, rdevmajor, rdevminor,
	// namesize (with its NUL), check (always 0 in newc).
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write([]byte(name + "\x00"))
	c.pad() // the name ends on a 4-byte boundary, counted from the header
	c.write(data)
	c.pad()
	return c.err
}

func (c *CPIOWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.wrote += int64(n)
	c.err = err
}

func (c *CPIOWriter) pad() {
	if r := c.wrote % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}
