//go:build linux

package load

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// ControlKeepAlive: Go's default (0) arms TCP keep-alive on the control
// connection, a negative value leaves it off, so a receiving host sends
// nothing through a long test. /proc/net/tcp's timer column tells: 2 is
// the keep-alive timer pending on an idle connection, 0 no timer.
func TestControlKeepAlive(t *testing.T) {
	port := startServer(t, &Server{})
	for _, c := range []struct {
		keepAlive time.Duration
		want      string
	}{{0, "02"}, {-1, "00"}} {
		t.Run(fmt.Sprint(c.keepAlive), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			test, err := Start(ctx, Config{Target: "127.0.0.1", Port: port, Protocol: UDP, Direction: Receive, UntilStopped: true,
				Rate: 100 * 64 * 8, BlockSize: 64, ControlKeepAlive: c.keepAlive})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				test.Stop()
				test.Wait()
			}()
			deadline := time.Now().Add(10 * time.Second)
			for test.Phase() != Running {
				if time.Now().After(deadline) {
					t.Fatalf("the test did not start: phase %v", test.Phase())
				}
				time.Sleep(10 * time.Millisecond)
			}
			// The last control bytes acknowledged, the connection idles.
			time.Sleep(300 * time.Millisecond)
			timer := controlTimer(t, port)
			if timer != c.want {
				t.Errorf("control connection's timer %q, want %q", timer, c.want)
			}
		})
	}
}

// controlTimer is the timer column (tr) of the one established TCP
// connection to 127.0.0.1:port from this host.
func controlTimer(t *testing.T, port uint16) string {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatalf("reading /proc/net/tcp: %v", err)
	}
	rem := fmt.Sprintf("0100007F:%04X", port)
	var found []string
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 5 && f[2] == rem && f[3] == "01" {
			found = append(found, strings.SplitN(f[5], ":", 2)[0])
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d established connections to %s: %q", len(found), rem, found)
	}
	return found[0]
}
