package main

// The real binary under floods, in a child process whose file descriptor
// limit is lowered, as an attacker on the same host would try it: `serve`
// and `--listen` must outlive running out of descriptors and answer a
// real iperf3 and a scrape once the flood is over.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bondtop/bondtop/internal/loopback"
)

// nofileEnv makes the test binary a launcher: it lowers RLIMIT_NOFILE
// (soft and hard, so the Go runtime cannot raise it back) to the value
// given and executes its arguments in its place.
const nofileEnv = "BONDTOP_TEST_EXEC_NOFILE"

func TestMain(m *testing.M) {
	if n := os.Getenv(nofileEnv); n != "" {
		execWithNofile(n, os.Args[1:])
	}
	os.Exit(m.Run())
}

func execWithNofile(n string, argv []string) {
	limit, err := strconv.ParseUint(n, 10, 64)
	if err == nil {
		err = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: limit, Max: limit})
	}
	if err == nil {
		os.Unsetenv(nofileEnv)
		err = syscall.Exec(argv[0], argv, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "launcher: %v\n", err)
	os.Exit(3)
}

// child is the binary running with a lowered descriptor limit.
type child struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    strings.Builder // stdout and stderr
	listen chan struct{}   // closed at the line that says it listens
	exited chan struct{}   // closed when the process has ended
	err    error           // its Wait's, once exited is closed
}

func (c *child) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

func (c *child) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// startLimited runs bondtop ARGS with at most nofile descriptors, and
// returns once it printed a line containing ready.
func startLimited(t *testing.T, nofile int, ready string, args ...string) *child {
	t.Helper()
	c := &child{listen: make(chan struct{}), exited: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], append([]string{binary(t)}, args...)...)
	c.cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", nofileEnv, nofile))
	pr, pw := io.Pipe()
	c.cmd.Stdout, c.cmd.Stderr = pw, pw
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		c.err = c.cmd.Wait()
		pw.Close()
		close(c.exited)
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		seen := false
		for sc.Scan() {
			fmt.Fprintln(c, sc.Text())
			if !seen && strings.Contains(sc.Text(), ready) {
				seen = true
				close(c.listen)
			}
		}
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.exited
		if t.Failed() {
			t.Logf("bondtop %v said:\n%s", args, c.output())
		}
	})
	select {
	case <-c.listen:
	case <-c.exited:
		t.Fatalf("bondtop %v exited before saying %q: %v", args, ready, c.err)
	case <-time.After(10 * time.Second):
		t.Fatalf("bondtop %v did not say %q within 10 s", args, ready)
	}
	return c
}

// alive fails the test when the child has exited.
func (c *child) alive(t *testing.T, when string) {
	t.Helper()
	select {
	case <-c.exited:
		t.Fatalf("bondtop exited %s: %v", when, c.err)
	default:
	}
}

// stop ends the child with SIGTERM and wants exit code 0.
func (c *child) stop(t *testing.T) {
	t.Helper()
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		if c.err != nil {
			t.Errorf("after SIGTERM: %v", c.err)
		}
	case <-time.After(10 * time.Second):
		t.Error("no exit within 10 s of SIGTERM")
	}
}

// freeLoopbackPort is a TCP port free on 127.0.0.1 now, its UDP twin too.
func freeLoopbackPort(t *testing.T) int { return loopback.FreePort(t) }

// flood opens n silent connections to port, from ten loopback addresses
// in turn, and returns them open.
func flood(t *testing.T, port, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range n {
		d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+i%10))}}
		c, err := d.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // the backlog is full: the flood did its part
		}
		conns = append(conns, c)
	}
	return conns
}

func iperf3Bin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("iperf3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("iperf3 is not installed: run scripts/test-deps.sh (CI must test against a real iperf3)")
		}
		t.Skip("iperf3 is not installed (scripts/test-deps.sh installs it)")
	}
	return p
}

func iperf3(t *testing.T, port int, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(iperf3Bin(t), append([]string{"-c", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)...)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
		}
	}()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// `bondtop serve` with 128 descriptors and 400 silent connections from
// ten addresses: it runs out of descriptors, waits, stays up, logs at a
// bounded rate, and serves a real iperf3 once the flood is over.
func TestServeSurvivesFloodUnderFDLimit(t *testing.T) {
	iperf3Bin(t)
	port := freeLoopbackPort(t)
	c := startLimited(t, 128, "listening on", "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	conns := flood(t, port, 400)
	time.Sleep(1500 * time.Millisecond)
	c.alive(t, "during the flood")
	if !strings.Contains(c.output(), "too many open files") {
		t.Errorf("400 connections under 128 descriptors and no accept error logged: the flood did not reach the limit")
	}
	for _, fc := range conns {
		fc.Close()
	}
	time.Sleep(1500 * time.Millisecond)
	if out, err := iperf3(t, port, "-t", "1"); err != nil {
		t.Fatalf("iperf3 -c after the flood: %v\n%s", err, out)
	}
	c.alive(t, "after the flood")
	if n := strings.Count(c.output(), "\n"); n > 40 {
		t.Errorf("%d log lines for one flood; refusals are not rate-limited", n)
	}
	c.stop(t)
}

// --allow refuses a client outside it before a byte, --max-rate caps a
// real iperf3 -R test, and bad values of either are usage errors.
func TestServeAllowAndMaxRate(t *testing.T) {
	iperf3Bin(t)
	port := freeLoopbackPort(t)
	c := startLimited(t, 1024, "listening on", "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--allow", "127.0.0.1/32", "--max-rate", "30M")
	if out, err := iperf3(t, port, "-t", "1", "-B", "127.0.0.2"); err == nil {
		t.Errorf("iperf3 from 127.0.0.2, outside --allow 127.0.0.1/32, ran:\n%s", out)
	}
	out, err := iperf3(t, port, "-t", "2", "-R", "-J")
	if err != nil {
		t.Fatalf("iperf3 -R: %v\n%s", err, out)
	}
	var r struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if got := r.End.SumReceived.BitsPerSecond; got > 31.5e6 || got < 15e6 {
		t.Errorf("iperf3 -R under --max-rate 30M received %.1f Mbit/s", got/1e6)
	}
	// UDP as fast as the client can: refused before a datagram.
	for _, args := range [][]string{{"-u", "-b", "0", "-t", "1"}, {"-u", "-b", "0", "-t", "1", "-P", "8"}} {
		out, err := iperf3(t, port, args...)
		if err == nil || !strings.Contains(out, "server limit") {
			t.Errorf("iperf3 %v under --max-rate 30M: %v\n%s\nwant the refusal", args, err, out)
		}
	}
	if !strings.Contains(c.output(), "127.0.0.2") || !strings.Contains(c.output(), "not in --allow") {
		t.Error("the refusal was not logged")
	}
	c.stop(t)

	for _, args := range [][]string{{"--allow", "10.0.0.0/33"}, {"--allow", "bogus"}, {"--allow", "fe80::1%eth0"}, {"--max-rate", "fast"}, {"--max-rate", "0"}} {
		_, stderr, code := runBinary(t, append([]string{"serve"}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, args[0]) {
			t.Errorf("serve %v: exit %d, %q; want a usage error naming the flag", args, code, stderr)
		}
	}
}
