package guest

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Traffic is a set of TCP streams from the root namespace to a sink in a
// peer namespace: a plain Go sender writing large blocks, which loads a
// link as well as iperf3 does.
type Traffic struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ln     net.Listener
	sent   []atomic.Int64
	errs   chan error

	// gate is held for reading around each write and for writing while
	// the streams are paused (Pause, Resume).
	gate  sync.RWMutex
	mu    sync.Mutex
	conns []*net.TCPConn // the streams that are connected
}

// StartTCP starts n streams to dst:5201, the sink listening inside peer.
// With srcPort > 0 stream i uses source port srcPort+i, so the transmit
// hash of layer3+4 gives the same slaves on every run.
func StartTCP(t testing.TB, peer *NS, src, dst net.IP, n, srcPort int) *Traffic {
	t.Helper()
	tr := &Traffic{sent: make([]atomic.Int64, n), errs: make(chan error, n+1)}
	addr := &net.TCPAddr{IP: dst, Port: 5201}
	err := peer.Do(func() error {
		var err error
		tr.ln, err = net.ListenTCP("tcp", addr)
		return err
	})
	if err != nil {
		t.Fatalf("sink on %v: %v", addr, err)
	}
	go func() { // the sink: read and drop
		for {
			c, err := tr.ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	tr.cancel = cancel
	for i := range n {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			d := net.Dialer{Timeout: 10 * time.Second}
			if srcPort > 0 {
				d.LocalAddr = &net.TCPAddr{IP: src, Port: srcPort + i}
			}
			c, err := d.DialContext(ctx, "tcp", addr.String())
			if err != nil {
				tr.errs <- fmt.Errorf("stream %d: %w", i, err)
				return
			}
			defer c.Close()
			go func() { <-ctx.Done(); c.Close() }()
			tr.mu.Lock()
			tr.conns = append(tr.conns, c.(*net.TCPConn))
			tr.mu.Unlock()
			buf := make([]byte, 128<<10)
			for ctx.Err() == nil {
				tr.gate.RLock()
				n, err := c.Write(buf)
				tr.gate.RUnlock()
				tr.sent[i].Add(int64(n))
				if err != nil {
					if ctx.Err() == nil {
						tr.errs <- fmt.Errorf("stream %d: %w", i, err)
					}
					return
				}
			}
		}()
	}
	t.Cleanup(func() { tr.Stop() })
	return tr
}

// Pause stops the streams writing and waits until every byte they wrote
// has been sent and acknowledged (each socket's send queue is empty), so
// every counter of the path stands still until Resume. It fails the test
// when the queues do not drain within 15 s.
func (tr *Traffic) Pause(t testing.TB) {
	t.Helper()
	tr.gate.Lock()
	deadline := time.Now().Add(15 * time.Second)
	for {
		queued, err := tr.queued()
		if err == nil && queued == 0 {
			return
		}
		if time.Now().After(deadline) {
			tr.gate.Unlock()
			t.Fatalf("the streams did not drain in 15 s: %d bytes still queued (%v)", queued, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Resume lets paused streams write again.
func (tr *Traffic) Resume() { tr.gate.Unlock() }

// queued is the bytes the streams wrote that their peer has not yet
// acknowledged (SIOCOUTQ), summed; it is an error while a stream is not
// yet connected.
func (tr *Traffic) queued() (int, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.conns) < len(tr.sent) {
		return 0, fmt.Errorf("%d of %d streams connected", len(tr.conns), len(tr.sent))
	}
	total := 0
	for _, c := range tr.conns {
		rc, err := c.SyscallConn()
		if err != nil {
			return 0, err
		}
		var n int
		var ioErr error
		if err := rc.Control(func(fd uintptr) { n, ioErr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil {
			return 0, err
		}
		if ioErr != nil {
			return 0, ioErr
		}
		total += n
	}
	return total, nil
}

// Stop ends the streams and returns the bytes each one wrote, with the
// first error any stream met.
func (tr *Traffic) Stop() ([]int64, error) {
	tr.cancel()
	tr.wg.Wait()
	tr.ln.Close()
	out := make([]int64, len(tr.sent))
	for i := range tr.sent {
		out[i] = tr.sent[i].Load()
	}
	select {
	case err := <-tr.errs:
		return out, err
	default:
		return out, nil
	}
}
