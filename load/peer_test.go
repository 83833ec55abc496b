package load

import (
	"bytes"
	"context"
	"fmt"
	"github.com/bondtop/bondtop/internal/loopback"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// iperf3Path finds the iperf3 binary the tests use as a real peer. Under
// CI=true a missing binary fails the test: CI installs it
// (scripts/test-deps.sh), so its absence is a broken setup, not a skip.
func iperf3Path(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("iperf3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("iperf3 is not installed: run scripts/test-deps.sh (CI must test against a real iperf3)")
		}
		t.Skip("iperf3 is not installed (scripts/test-deps.sh installs it); skipping the tests against a real iperf3")
	}
	return p
}

// freePort returns a TCP port that is free on loopback now, and whose UDP
// twin is free too (iperf3 uses both).
func freePort(t testing.TB) uint16 { return uint16(loopback.FreePort(t)) }

// syncBuffer is an output buffer safe for a process and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startIperf3Server runs a real `iperf3 -s` on a free loopback port until
// the test ends, and returns the port once it accepts connections.
func startIperf3Server(t testing.TB) uint16 {
	t.Helper()
	bin := iperf3Path(t)
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	cmd := exec.CommandContext(ctx, bin, "-s", "-B", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("iperf3 -s output:\n%s", out.String())
		}
	})
	waitListening(t, port)
	return port
}

func waitListening(t testing.TB, port uint16) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		// A connection that says nothing would occupy an iperf3 server
		// until its timeout: probe the port with a listen attempt instead.
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return
		}
		l.Close()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nothing listens on port %d", port)
}

// runIperf3Client runs a real `iperf3 -c` against port with extra args
// and returns its output.
func runIperf3Client(t testing.TB, port uint16, args ...string) (string, error) {
	t.Helper()
	bin := iperf3Path(t)
	all := append([]string{"-c", "127.0.0.1", "-p", fmt.Sprint(port)}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, all...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// startServer runs bondtop's server on a free loopback port until the
// test ends.
func startServer(t testing.TB, srv *Server) uint16 {
	t.Helper()
	port := freePort(t)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Logf == nil {
		srv.Logf = t.Logf
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ctx, ln)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return port
}
