// Package filekind names the type of a file that is not a regular file,
// for the errors of readers and writers that accept regular files only
// (--record, --root trees).
package filekind

import "io/fs"

// Of names m's type: "a FIFO", "a character device", "a directory", ...
func Of(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}
