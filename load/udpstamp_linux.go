package load

import (
	"encoding/binary"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// stampedReader reads datagrams with the time the kernel received them
// (SO_TIMESTAMPNS), not the time this goroutine got to run: on a busy
// host the two differ by the scheduler's delay, which would show as a gap
// in the stream that the wire never had.
type stampedReader struct {
	c   *net.UDPConn
	oob []byte
}

// stampedBuffer is the receive buffer of a timed stream's socket.
const stampedBuffer = 8 << 20

func newStampedReader(c net.Conn) *stampedReader {
	uc, ok := c.(*net.UDPConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		// Room for a few seconds of small datagrams: a reader that runs
		// late must find them queued, not dropped (a drop would be a
		// gap the wire never had). Root may exceed rmem_max.
		if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, stampedBuffer) != nil {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, stampedBuffer)
		}
	}); err != nil || serr != nil {
		return nil
	}
	return &stampedReader{c: uc, oob: make([]byte, unix.CmsgSpace(16))}
}

// read returns the datagram's length and its kernel receive time (now,
// when the kernel gave none).
func (r *stampedReader) read(buf []byte) (int, time.Time, error) {
	n, oobn, _, _, err := r.c.ReadMsgUDP(buf, r.oob)
	if err != nil {
		return n, time.Time{}, err
	}
	if msgs, perr := unix.ParseSocketControlMessage(r.oob[:oobn]); perr == nil {
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS {
				if at, ok := timespec(m.Data); ok {
					return n, at, nil
				}
			}
		}
	}
	return n, time.Now(), nil
}

// timespec decodes a struct timespec of this platform's word size.
func timespec(b []byte) (time.Time, bool) {
	switch len(b) {
	case 16:
		return time.Unix(int64(binary.NativeEndian.Uint64(b)), int64(binary.NativeEndian.Uint64(b[8:]))), true
	case 8:
		return time.Unix(int64(int32(binary.NativeEndian.Uint32(b))), int64(int32(binary.NativeEndian.Uint32(b[4:])))), true
	}
	return time.Time{}, false
}
