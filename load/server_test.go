package load

import (
	"context"
	"errors"
	"fmt"

	"net"
	"strings"
	"testing"
	"time"
)

// A real iperf3 client against bondtop's server, in every mode.
func TestIperf3ClientAgainstServer(t *testing.T) {
	port := startServer(t, &Server{})
	for _, args := range [][]string{
		{"-t", "1"},
		{"-t", "1", "-P", "4"},
		{"-t", "1", "-R", "-P", "2"},
		{"-t", "1", "--bidir", "-P", "2"},
		{"-t", "2", "-O", "1"},
		{"-n", "10M"},
		{"-t", "1", "-u", "-b", "10M"},
		{"-t", "1", "-u", "-b", "10M", "-R", "-P", "2"},
		{"-t", "1", "-u", "-b", "10M", "--udp-counters-64bit"},
	} {
		out, err := runIperf3Client(t, port, append(args, "-J")...)
		if err != nil {
			t.Fatalf("iperf3 %v: %v\n%s", args, err, out)
		}
		rep := parseIperf3JSON(t, out)
		if rep.Error != "" {
			t.Fatalf("iperf3 %v: %s", args, rep.Error)
		}
		if rep.End.SumReceived.Bytes == 0 && rep.End.Sum.Bytes == 0 {
			t.Errorf("iperf3 %v: nothing received: %s", args, out)
		}
	}
}

// A second iperf3 client is told the server is busy, and the first one
// finishes well.
func TestIperf3ClientBusyServer(t *testing.T) {
	port := startServer(t, &Server{})
	first := make(chan error, 1)
	go func() {
		out, err := runIperf3Client(t, port, "-t", "3")
		if err != nil {
			err = fmt.Errorf("%v: %s", err, out)
		}
		first <- err
	}()
	time.Sleep(time.Second)
	out, err := runIperf3Client(t, port, "-t", "1")
	if err == nil || !strings.Contains(out, "busy") {
		t.Errorf("second iperf3: %v, %s; want busy", err, out)
	}
	if err := <-first; err != nil {
		t.Errorf("first iperf3: %v", err)
	}
}

// bondtop's client against bondtop's server.
func TestClientAgainstServer(t *testing.T) {
	port := startServer(t, &Server{})
	for _, cfg := range []Config{
		{Streams: 1},
		{Streams: 4},
		{Streams: 2, Direction: Receive},
		{Streams: 2, Direction: Bidirectional},
		{Protocol: UDP, Rate: 20e6, Streams: 2},
		{Protocol: UDP, Rate: 20e6, Direction: Receive},
	} {
		cfg.Target, cfg.Port, cfg.Duration, cfg.Interval = "127.0.0.1", port, time.Second, 250*time.Millisecond
		sum, ivs := runClient(t, cfg)
		checkSummary(t, cfg, sum, ivs)
	}
}

// An open-ended test ends at the server's maximum duration, and the
// client says why.
func TestServerMaxDuration(t *testing.T) {
	port := startServer(t, &Server{MaxDuration: 1500 * time.Millisecond, StepTimeout: 2 * time.Second})
	test, _ := Start(context.Background(), Config{Target: "127.0.0.1", Port: port, UntilStopped: true})
	_, err := test.Wait()
	if err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Errorf("got %v, want the server's termination in words", err)
	}
	runClient(t, Config{Target: "127.0.0.1", Port: port, Duration: time.Second})
}

// Parameters beyond the server's limits come back as SERVER_ERROR.
func TestServerRefusesTooLong(t *testing.T) {
	port := startServer(t, &Server{MaxDuration: 5 * time.Second})
	test, _ := Start(context.Background(), Config{Target: "127.0.0.1", Port: port, Duration: time.Minute})
	_, err := test.Wait()
	var se *ServerError
	if !errors.As(err, &se) || se.Code != ieDuration {
		t.Errorf("got %v, want SERVER_ERROR %d", err, ieDuration)
	}
}

// Garbage and half-open connections never wedge the server: a good test
// runs right after (and while) they sit there.
func TestServerSurvivesGarbage(t *testing.T) {
	srv := &Server{StepTimeout: time.Second, IdleTimeout: 2 * time.Second}
	port := startServer(t, srv)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Each case its own cookie, or they would be one test's streams.
	c := func() []byte { k := newCookie(); return k[:] }
	cases := map[string][]byte{
		"nothing":          nil,
		"short cookie":     []byte("abc"),
		"bad cookie":       []byte(strings.Repeat("\x01", cookieSize)),
		"http":             []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + strings.Repeat("x", 64)),
		"huge length":      append(c(), 0xff, 0xff, 0xff, 0xff, '{'),
		"zero length":      append(c(), 0, 0, 0, 0),
		"truncated json":   append(c(), 0, 0, 0, 100, '{'),
		"not json":         append(c(), 0, 0, 0, 3, 'a', 'b', 'c'),
		"json array":       append(c(), 0, 0, 0, 2, '[', ']'),
		"params then gone": append(c(), append([]byte{0, 0, 0, 25}, `{"tcp":true,"parallel":3}`...)...),
	}
	var held []net.Conn
	for name, b := range cases {
		c := dial()
		if b != nil {
			c.Write(b)
		}
		if strings.HasPrefix(name, "params") || name == "nothing" {
			held = append(held, c) // half-open: sits there silently
			continue
		}
		c.Close()
	}
	// A good test while the half-open ones still hang around.
	runClient(t, Config{Target: "127.0.0.1", Port: port, Duration: time.Second, StepTimeout: 5 * time.Second})
	for _, c := range held {
		c.Close()
	}
	// A client that vanishes mid-test, and one that stops after
	// connecting one of its two streams.
	vanish(t, addr, 1, 1, false)
	vanish(t, addr, 2, 1, false)
	// One that keeps its control connection but stops sending data.
	vanish(t, addr, 1, 1, true)
	runClient(t, Config{Target: "127.0.0.1", Port: port, Duration: time.Second, StepTimeout: 5 * time.Second})
}

// vanish speaks the protocol up to the streams, connects only connect of
// them, sends a little data, and drops every connection.
func vanish(t *testing.T, addr string, streams, connect int, keepControl bool) {
	t.Helper()
	var c net.Conn
	var ctl *ctrl
	var cookie [cookieSize]byte
	// The previous test may still be ending: the server says busy.
	for deadline := time.Now().Add(5 * time.Second); ; {
		var err error
		c, err = net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		ctl = &ctrl{c: c, timeout: 5 * time.Second, maxJSON: maxJSONClient}
		cookie = newCookie()
		c.Write(cookie[:])
		st, err := ctl.readState(0)
		if err == nil && st == stParamExchange {
			break
		}
		c.Close()
		if st != stAccessDenied || time.Now().After(deadline) {
			t.Fatalf("got %v, %v; want PARAM_EXCHANGE", st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if keepControl {
		t.Cleanup(func() { c.Close() })
	} else {
		defer c.Close()
	}
	ctl.writeJSON(params{TCP: true, Time: 10, Parallel: streams})
	expectStates(t, ctl, stCreateStreams)
	for range connect {
		d, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		d.Write(cookie[:])
		d.Write(make([]byte, 1<<16))
		if keepControl {
			t.Cleanup(func() { d.Close() })
		} else {
			defer d.Close()
		}
	}
	if streams == connect {
		ctl.readState(0) // TEST_START
		ctl.readState(0) // TEST_RUNNING
	}
}

type iperf3Report struct {
	Error string `json:"error"`
	End   struct {
		Sum         struct{ Bytes num } `json:"sum"`
		SumReceived struct{ Bytes num } `json:"sum_received"`
	} `json:"end"`
}

func parseIperf3JSON(t *testing.T, out string) iperf3Report {
	t.Helper()
	var r iperf3Report
	if err := decodeLenient([]byte(out), &r); err != nil {
		t.Fatalf("iperf3 -J output: %v\n%s", err, out)
	}
	return r
}

// A client that comes while the last test's results are on display (as
// a script running iperf3 twice in a row does) waits for that test to go
// and gets the server, instead of being told it is busy; while it waits
// it keeps its place among the pending connections, so a flood of such
// clients stays bounded.
func TestServerAdmitsAfterResults(t *testing.T) {
	port := startServer(t, &Server{StepTimeout: 5 * time.Second, MaxPendingPerSource: 1})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ctl, cookie := openTest(t, addr, params{TCP: true, Time: 10, Parallel: 1})
	d := dialFrom(t, "127.0.0.1", port)
	d.Write(cookie[:])
	expectStates(t, ctl, stTestStart, stTestRunning)
	ctl.writeState(stTestEnd)
	expectStates(t, ctl, stExchangeResults)
	ctl.writeJSON(results{Streams: []streamResult{{ID: 1}}})
	var theirs results
	if err := ctl.readJSON(&theirs); err != nil {
		t.Fatal(err)
	}
	expectStates(t, ctl, stDisplayResults)

	next := dialFrom(t, "127.0.0.1", port)
	nextCookie := newCookie()
	next.Write(nextCookie[:])
	if !heldOpen(next) {
		t.Fatal("a client that came while the results were on display was not held until the test went")
	}
	if err := closedAtOnce(dialFrom(t, "127.0.0.1", port)); err != nil {
		t.Errorf("a second connection from the address whose one pending place is taken by the waiting client: %v", err)
	}
	ctl.writeState(stIperfDone)
	nextCtl := &ctrl{c: next, timeout: 5 * time.Second, maxJSON: maxJSONClient}
	// Once the last test went, the waiting client gets the server.
	expectStates(t, nextCtl, stParamExchange)
}

// A client may send as soon as TEST_START arrives (iperf3's does, before
// TEST_RUNNING): the server counts those datagrams, and counts none of
// them lost. Datagrams 1..n go out the moment TEST_START is read, the
// rest after TEST_RUNNING.
func TestServerCountsFromTestStart(t *testing.T) {
	port := startServer(t, &Server{StepTimeout: 5 * time.Second})
	server := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(port)}
	for round := range 20 {
		ctl, _ := openTest(t, server.String(), params{UDP: true, Time: 10, Parallel: 1, Len: 64})
		own, err := net.DialUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, server)
		if err != nil {
			t.Fatal(err)
		}
		own.Write([]byte(udpConnectMsg))
		own.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		if n, err := own.Read(buf); err != nil || string(buf[:n]) != udpConnectReply {
			t.Fatalf("hello: %q, %v; want the reply", buf[:n], err)
		}
		const early, total = 20, 40
		send := func(from, to uint64) {
			for seq := from; seq <= to; seq++ {
				putUDPHeader(buf, time.Now(), seq, false)
				if _, err := own.Write(buf); err != nil {
					t.Fatal(err)
				}
			}
		}
		expectStates(t, ctl, stTestStart)
		send(1, early)
		expectStates(t, ctl, stTestRunning)
		send(early+1, total)
		time.Sleep(200 * time.Millisecond) // for the server to read them, on a busy machine too
		ctl.writeState(stTestEnd)
		expectStates(t, ctl, stExchangeResults)
		ctl.writeJSON(results{Streams: []streamResult{{ID: 1, Packets: total}}})
		var theirs results
		if err := ctl.readJSON(&theirs); err != nil {
			t.Fatal(err)
		}
		expectStates(t, ctl, stDisplayResults)
		ctl.writeState(stIperfDone)
		own.Close()
		if len(theirs.Streams) != 1 || theirs.Streams[0].Packets != total || theirs.Streams[0].Errors != 0 {
			t.Fatalf("round %d: the server's results %+v; want %d packets, none lost", round, theirs.Streams, total)
		}
	}
}
