//go:build !linux

package ui

import "io"

// openFrameWriter: outside Linux the painter writes through tcell's tty.
func openFrameWriter() io.WriteCloser { return nil }
