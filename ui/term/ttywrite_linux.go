package term

import (
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// frameWriter sends the painter's frames to the terminal with a raw
// write(2) on a descriptor of its own, in non-blocking mode. The Go runtime
// is not told of a raw call, so a frame's write does not wake its monitor
// thread (sysmon), which otherwise polls every 20 µs for as long as the
// tick runs: with the tree read raw as well (collector's rootfs), the
// write was what still woke it on every frame. A raw call that blocked
// would stop every goroutine, so the descriptor must be non-blocking: a
// terminal that is not taking output (flow control, a slow link) returns
// EAGAIN, and the rest of the frame goes through the ordinary write, which
// waits in the runtime's poller like any other.
type frameWriter struct {
	f  *os.File
	fd int
}

// OpenFrameWriter opens the controlling terminal for the frames; nil when
// it cannot, or when the descriptor is not non-blocking (then tcell's own
// writes serve).
func OpenFrameWriter() io.WriteCloser { return openFrameWriterAt("/dev/tty") }

// openFrameWriterAt opens the terminal device at path for the frames.
func openFrameWriterAt(path string) io.WriteCloser {
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	w := &frameWriter{f: f, fd: -1}
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			// os registers a terminal with the poller, which makes it
			// non-blocking; a raw write is safe only then.
			if flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0); err == nil && flags&unix.O_NONBLOCK != 0 {
				w.fd = int(fd)
			}
		})
	}
	if w.fd < 0 {
		f.Close()
		return nil
	}
	return w
}

// Write implements io.Writer.
func (w *frameWriter) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(w.fd), uintptr(unsafe.Pointer(&b[done])), uintptr(len(b)-done))
		switch errno {
		case 0:
			done += int(n)
			continue
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			m, err := w.f.Write(b[done:]) // waits in the poller
			return done + m, err
		}
		return done, errno
	}
	return done, nil
}

// Close implements io.Closer.
func (w *frameWriter) Close() error { return w.f.Close() }
