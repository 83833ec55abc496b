package neighbors

import (
	"os"
	"testing"
	"time"
)

// TestListenerCloseEndsReaders: Close returns promptly while every reader
// is blocked in a read (a hang here hangs bondtop's exit).
func TestListenerCloseEndsReaders(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("packet sockets need root")
		}
		t.Skip("packet sockets need root")
	}
	l := NewListener(nil)
	if err := l.Watch([]string{"lo"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the reader blocks in its read
	done := make(chan struct{})
	go func() { l.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Close still waiting for its readers after 2 s")
	}
	// Watch drops a slave no longer listed: its socket closes, its reader ends.
	l = NewListener(nil)
	defer l.Close()
	if err := l.Watch([]string{"lo"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Watch(nil); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { l.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(2 * time.Second):
		t.Fatal("the dropped slave's reader still runs")
	}
}
