// Package termtest holds what tests of the terminal layer and of the
// screen share: a terminal that swallows output and never types.
package termtest

import (
	"io"
	"sync"

	"github.com/gdamore/tcell/v2"
)

// NullTty is a terminal that swallows output and never types: tcell's
// real screen (terminfo encoding, dirty-cell tracking) on top of it costs
// what it costs on a user's terminal, minus the kernel's write.
type NullTty struct {
	width, height int
	Written       int64
	closed        chan struct{}
	once          sync.Once
}

// NewNullTty makes a w x h terminal that swallows output.
func NewNullTty(w, h int) *NullTty { return &NullTty{width: w, height: h, closed: make(chan struct{})} }

func (t *NullTty) Start() error        { return nil }
func (t *NullTty) Stop() error         { return nil }
func (t *NullTty) Drain() error        { return t.Close() } // tcell drains, then waits for its reader
func (t *NullTty) NotifyResize(func()) {}
func (t *NullTty) Write(b []byte) (int, error) {
	t.Written += int64(len(b))
	return len(b), nil
}
func (t *NullTty) Read([]byte) (int, error) {
	<-t.closed
	return 0, io.EOF
}
func (t *NullTty) Close() error {
	t.once.Do(func() { close(t.closed) })
	return nil
}
func (t *NullTty) WindowSize() (tcell.WindowSize, error) {
	return tcell.WindowSize{Width: t.width, Height: t.height}, nil
}
