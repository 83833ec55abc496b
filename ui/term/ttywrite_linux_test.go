package term

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal pair: the master to read what is
// written, and the path of its slave.
func openPty(t *testing.T) (*os.File, string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	return master, fmt.Sprintf("/dev/pts/%d", n)
}

// TestFrameWriterNeverStopsTheRuntime: a frame larger than the terminal
// takes at once (no one reads the pty for a while) must neither be cut
// nor hold up the other goroutines. With one P, a raw write that blocked
// would stop the reader below too, and the test would hang.
func TestFrameWriterNeverStopsTheRuntime(t *testing.T) {
	master, slave := openPty(t)
	w := openFrameWriterAt(slave)
	if w == nil {
		t.Fatalf("the frame writer did not open %s in non-blocking mode", slave)
	}
	defer w.Close()
	// Raw mode on the slave: the line discipline passes bytes through.
	sfd, err := os.OpenFile(slave, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sfd.Close()
	tio, err := unix.IoctlGetTermios(int(sfd.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	tio.Lflag &^= unix.ECHO | unix.ICANON
	if err := unix.IoctlSetTermios(int(sfd.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	frame := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, far past a pty's buffer
	got := make(chan []byte, 1)
	go func() {
		time.Sleep(200 * time.Millisecond) // let the writer fill the pty first
		buf := make([]byte, 0, len(frame))
		chunk := make([]byte, 64<<10)
		for len(buf) < len(frame) {
			n, err := master.Read(chunk)
			buf = append(buf, chunk[:n]...)
			if err != nil {
				break
			}
		}
		got <- buf
	}()
	n, err := w.Write(frame)
	if err != nil || n != len(frame) {
		t.Fatalf("wrote %d of %d bytes: %v", n, len(frame), err)
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, frame) {
			t.Fatalf("the terminal got %d bytes, not the %d written in order", len(b), len(frame))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader never finished")
	}
	var _ io.Writer = w // the painter's out
}
