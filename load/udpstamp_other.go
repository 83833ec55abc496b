//go:build !linux

package load

import (
	"net"
	"time"
)

// stampedReader needs Linux's SO_TIMESTAMPNS; elsewhere datagrams are
// stamped when read.
type stampedReader struct{}

func newStampedReader(net.Conn) *stampedReader { return nil }

func (r *stampedReader) read([]byte) (int, time.Time, error) { panic("unreachable") }
