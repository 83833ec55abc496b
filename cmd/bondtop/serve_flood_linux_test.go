package main

// The real binary under floods, in a child process whose file descriptor
// limit is lowered, as an attacker on the same host would try it: `serve`
// and `--listen` must outlive running out of descriptors and answer a
// real iperf3 and a scrape once the flood is over.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/bondtop/bondtop/internal/loopback"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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

// `--root DIR --listen --headless` with 128 descriptors and 300 idle
// connections to /metrics: the exporter holds a bounded number, so its
// reads of the tree never fail, and it answers a scrape once the flood
// is over. Then a tree that cannot be read is an error metric, not an
// exit, and a readable one brings the bond metrics back.
func TestMetricsSurvivesFloodUnderFDLimit(t *testing.T) {
	dir := hostTree(t)
	port := freeLoopbackPort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	c := startLimited(t, 128, "serving metrics", "--root", dir, "--listen", addr, "--headless", "--interval", "100ms")
	conns := flood(t, port, 300)
	// Half of them ask once and then idle on a kept-alive connection.
	for i, fc := range conns {
		if i%2 == 0 {
			fmt.Fprintf(fc, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		}
	}
	time.Sleep(1500 * time.Millisecond)
	c.alive(t, "during the flood")
	// The connections it holds are bounded, far below the limit.
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", c.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if len(fds) > metricsMaxConns+24 {
		t.Errorf("%d descriptors open during a flood of %d connections; want at most %d connections held", len(fds), len(conns), metricsMaxConns)
	}
	t.Logf("%d connections, %d descriptors open in bondtop", len(conns), len(fds))
	for _, fc := range conns {
		fc.Close()
	}
	fams := scrapeWithin(t, addr, 10*time.Second)
	if got := metricValue(fams, "bondtop_read_errors_total"); got != 0 {
		t.Errorf("%v failed reads of the tree during the flood: the connections were not bounded", got)
	}
	if fams["bondtop_slave_up"] == nil {
		t.Error("no slave metrics after the flood")
	}

	// The tree becomes unreadable: its proc and sys turn into files.
	for _, sub := range []string{"proc", "sys"} {
		p := filepath.Join(dir, sub)
		if err := os.Rename(p, p+".away"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not a directory"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	c.alive(t, "with an unreadable tree")
	fams = scrapeWithin(t, addr, 5*time.Second)
	if metricValue(fams, "bondtop_read_success") != 0 || metricValue(fams, "bondtop_read_errors_total") < 1 {
		t.Errorf("unreadable tree: read_success %v, read_errors_total %v; want 0 and at least 1",
			metricValue(fams, "bondtop_read_success"), metricValue(fams, "bondtop_read_errors_total"))
	}
	for _, sub := range []string{"proc", "sys"} {
		p := filepath.Join(dir, sub)
		os.Remove(p)
		if err := os.Rename(p+".away", p); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	fams = scrapeWithin(t, addr, 5*time.Second)
	if metricValue(fams, "bondtop_read_success") != 1 || fams["bondtop_slave_up"] == nil {
		t.Error("a readable tree again did not bring the metrics back")
	}
	if n := strings.Count(c.output(), "not a directory"); n != 1 {
		t.Errorf("the failing read was reported %d times in 500 ms; want once", n)
	}
	c.stop(t)
}

// scrapeWithin scrapes addr until it answers, for up to d.
func scrapeWithin(t *testing.T, addr string, d time.Duration) map[string]*dto.MetricFamily {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			last = err
			continue
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("unparsable metrics: %v", err)
		}
		return fams
	}
	t.Fatalf("no scrape of %s within %v: %v", addr, d, last)
	return nil
}

// metricValue is the value of a family's first metric, -1 when absent.
func metricValue(fams map[string]*dto.MetricFamily, name string) float64 {
	f := fams[name]
	if f == nil || len(f.Metric) == 0 {
		return -1
	}
	m := f.Metric[0]
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
