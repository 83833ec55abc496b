//go:build !linux

package term

import "io"

// OpenFrameWriter: outside Linux the painter writes through tcell's tty.
func OpenFrameWriter() io.WriteCloser { return nil }
