package load

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startClient starts a test, again while a real iperf3 server is between
// tests: it refuses connections, or says it is busy, until it has
// restarted its listener.
func startClient(t *testing.T, cfg Config) *Test {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		test, err := Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-test.Done():
			_, err := test.Result()
			if err != nil && time.Now().Before(deadline) &&
				len(test.Streams()) == 0 && (errors.Is(err, ErrBusy) || errors.Is(err, syscall.ECONNREFUSED) ||
				// 3.12 resets a control connection that reaches its
				// old listener while it restarts between tests.
				errors.Is(err, syscall.ECONNRESET) || strings.Contains(err.Error(), "connection reset") ||
				strings.Contains(err.Error(), "closed the control connection")) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		case <-time.After(500 * time.Millisecond):
		}
		return test
	}
}

func runClient(t *testing.T, cfg Config) (Summary, []Interval) {
	t.Helper()
	test := startClient(t, cfg)
	var ivs []Interval
	for iv := range test.Intervals() {
		ivs = append(ivs, iv)
	}
	sum, err := test.Wait()
	if err != nil {
		t.Fatalf("test: %v", err)
	}
	return sum, ivs
}

// checkSummary checks what every good test shows: the asked-for streams,
// iperf3's ids, bytes both ways, and intervals that add up.
func checkSummary(t *testing.T, cfg Config, sum Summary, ivs []Interval) {
	t.Helper()
	want := max(cfg.Streams, 1)
	if cfg.Direction == Bidirectional {
		want *= 2
	}
	if len(sum.Streams) != want {
		t.Fatalf("%d streams in the summary, want %d", len(sum.Streams), want)
	}
	for i, s := range sum.Streams {
		wantID := 1
		if i > 0 {
			wantID = i + 2
		}
		if s.ID != wantID {
			t.Errorf("stream %d has id %d, want %d (iperf3 skips 2)", i, s.ID, wantID)
		}
		if s.SentBytes == 0 || s.ReceivedBytes == 0 {
			t.Errorf("stream %d: sent %d, received %d: want both > 0", s.ID, s.SentBytes, s.ReceivedBytes)
		}
		if s.ReceivedBytes > s.SentBytes {
			t.Errorf("stream %d: received %d > sent %d", s.ID, s.ReceivedBytes, s.SentBytes)
		}
		if s.SourcePort == 0 {
			t.Errorf("stream %d: no source port", s.ID)
		}
		if s.Sender != (cfg.Direction == Send || cfg.Direction == Bidirectional && i < want/2) {
			t.Errorf("stream %d: sender %v in a %v test", s.ID, s.Sender, cfg.Direction)
		}
	}
	if len(ivs) == 0 {
		t.Fatal("no intervals")
	}
	// This host's bytes over the intervals are its bytes in the summary.
	var total, mine uint64
	for _, iv := range ivs {
		for _, s := range iv.Streams {
			total += s.Bytes
		}
	}
	for _, s := range sum.Streams {
		if s.Sender {
			mine += s.SentBytes
		} else {
			mine += s.ReceivedBytes
		}
	}
	if total != mine {
		t.Errorf("intervals add up to %d bytes, the summary says %d", total, mine)
	}
}

func TestClientAgainstIperf3(t *testing.T) {
	port := startIperf3Server(t)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"tcp P1", Config{Streams: 1}},
		{"tcp P4", Config{Streams: 4}},
		{"tcp reverse P2", Config{Streams: 2, Direction: Receive}},
		{"tcp bidir P2", Config{Streams: 2, Direction: Bidirectional}},
		{"tcp paced", Config{Streams: 2, Rate: 50e6}},
		{"udp", Config{Protocol: UDP, Rate: 20e6}},
		{"udp reverse P2", Config{Protocol: UDP, Rate: 10e6, Streams: 2, Direction: Receive}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Target, cfg.Port = "127.0.0.1", port
			cfg.Duration, cfg.Interval = 2*time.Second, 500*time.Millisecond
			sum, ivs := runClient(t, cfg)
			checkSummary(t, cfg, sum, ivs)
			if cfg.Rate > 0 {
				for _, s := range sum.Streams {
					if s.BitsPerSecond > 1.2*float64(cfg.Rate) || s.BitsPerSecond < 0.6*float64(cfg.Rate) {
						t.Errorf("stream %d: %.0f bit/s, paced at %d", s.ID, s.BitsPerSecond, cfg.Rate)
					}
				}
			}
			if cfg.Protocol == TCP && cfg.Direction == Send && hasTCPInfo {
				for _, s := range sum.Streams {
					if s.Retransmits < 0 {
						t.Errorf("stream %d: retransmits unknown", s.ID)
					}
				}
				if ivs[0].Streams[0].RTT <= 0 {
					t.Errorf("no RTT in the first interval")
				}
			}
			if cfg.Protocol == UDP {
				for _, s := range sum.Streams {
					if s.Packets == 0 {
						t.Errorf("stream %d: no datagram count", s.ID)
					}
				}
			}
		})
	}
}

// A test until stopped ends on Stop, cleanly: the server sends its
// results, and takes the next test at once.
func TestClientStopAgainstIperf3(t *testing.T) {
	port := startIperf3Server(t)
	for _, dir := range []Direction{Send, Receive} {
		test := startClient(t, Config{Target: "127.0.0.1", Port: port, UntilStopped: true, Direction: dir, Streams: 2})
		iv, ok := <-test.Intervals()
		if !ok {
			_, err := test.Wait()
			t.Fatalf("ended before an interval: %v", err)
		}
		if iv.End <= 0 {
			t.Errorf("interval ends at %v", iv.End)
		}
		test.Stop()
		sum, err := test.Wait()
		if err != nil {
			t.Fatalf("%v: %v", dir, err)
		}
		if !sum.Stopped || sum.Duration > 5*time.Second {
			t.Errorf("%v: stopped %v after %v", dir, sum.Stopped, sum.Duration)
		}
		for _, s := range sum.Streams {
			if s.ReceivedBytes == 0 {
				t.Errorf("%v: stream %d: the peer reported nothing: no clean end?", dir, s.ID)
			}
		}
	}
	// The server is free again.
	runClient(t, Config{Target: "127.0.0.1", Port: port, Duration: time.Second})
}

// A second client gets the busy server's ACCESS_DENIED, in words.
func TestClientBusyIperf3(t *testing.T) {
	port := startIperf3Server(t)
	first := startClient(t, Config{Target: "127.0.0.1", Port: port, UntilStopped: true})
	<-first.Intervals()
	second, _ := Start(context.Background(), Config{Target: "127.0.0.1", Port: port, Duration: time.Second})
	_, err := second.Wait()
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "busy") {
		t.Errorf("second client: %v, want busy", err)
	}
	first.Stop()
	if _, err := first.Wait(); err != nil {
		t.Errorf("first client: %v", err)
	}
}

func TestClientRefused(t *testing.T) {
	port := freePort(t)
	test, _ := Start(context.Background(), Config{Target: "127.0.0.1", Port: port, StepTimeout: 2 * time.Second})
	_, err := test.Wait()
	if err == nil || !strings.Contains(err.Error(), "iperf3 -s") {
		t.Errorf("got %v, want a refused connection that says what to run", err)
	}
}

// A server that sends SERVER_ERROR: the error is in words.
func TestClientServerError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var cookie [cookieSize]byte
		c.Read(cookie[:])
		// SERVER_ERROR, IESTREAMLISTEN, EADDRINUSE.
		c.Write([]byte{0xfe, 0, 0, 0, ieStreamListen, 0, 0, 0, 98})
		time.Sleep(time.Second)
	}()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	test, _ := Start(context.Background(), Config{Target: "127.0.0.1", Port: port})
	_, err = test.Wait()
	var se *ServerError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "could not listen for data streams") {
		t.Errorf("got %v, want a ServerError in words", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{},
		{Target: "a b"},
		{Target: "h", Streams: 129},
		{Target: "h", Duration: 2 * time.Hour},
		{Target: "h", Duration: time.Millisecond},
		{Target: "h", BlockSize: 2 << 20},
		{Target: "h", Protocol: UDP, BlockSize: 70000},
		{Target: "h", FirstPort: 65535, Streams: 2},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: valid, want an error", c)
		}
	}
	if err := (Config{Target: "10.0.0.1"}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestParseTargetAndRate(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.5": "10.0.0.5:0", "10.0.0.5:5202": "10.0.0.5:5202", "[2001:db8::1]:9": "2001:db8::1:9",
		"2001:db8::1": "2001:db8::1:0", "host.example": "host.example:0",
	} {
		h, p, err := ParseTarget(in)
		if got := h + ":" + itoa(int(p)); err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a b", "h:0", "h:x", "h:70000"} {
		if _, _, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q): no error", bad)
		}
	}
	for in, want := range map[string]uint64{"100M": 100e6, "2.5G": 2.5e9, "1000": 1000, "64k": 64e3} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v", in, got, err)
		}
	}
	if _, err := ParseRate("fast"); err == nil {
		t.Error("ParseRate(fast): no error")
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
