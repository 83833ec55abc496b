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
			buf := make([]byte, 128<<10)
			for ctx.Err() == nil {
				n, err := c.Write(buf)
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
