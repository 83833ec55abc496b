package load

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The tests in this file hold sockets against the server, from several
// loopback addresses, while a real iperf3 client runs its tests.

// silentFlood keeps per connections open from each of srcs, silent:
// one the server closes (its hello timeout, or its place taken by
// another source) is dialed again at once, until the test ends. It
// returns how many connections were dialed so far.
func silentFlood(t *testing.T, port uint16, srcs []string, per int) func() int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var dialed atomic.Int64
	for _, src := range srcs {
		for range per {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
				for ctx.Err() == nil {
					c, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
					if err != nil {
						time.Sleep(10 * time.Millisecond)
						continue
					}
					dialed.Add(1)
					stop := context.AfterFunc(ctx, func() { c.Close() })
					var b [1]byte
					c.Read(b[:]) // until the server closes it
					stop()
					c.Close()
				}
			}()
		}
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return dialed.Load
}

// 256 silent connections from 8 addresses (the default bounds: 256 in
// all, 32 an address) keep none of 8 real iperf3 runs from other
// addresses out: each takes a place from the addresses holding most.
func TestServerSilentFloodFair(t *testing.T) {
	var log lineLog
	port := startServer(t, &Server{Logf: log.logf})
	var srcs []string
	for i := 1; i <= 8; i++ {
		srcs = append(srcs, fmt.Sprintf("127.0.0.%d", i))
	}
	dialed := silentFlood(t, port, srcs, DefaultMaxPendingPerSource)
	time.Sleep(time.Second) // every place taken
	ok := 0
	for i := range 8 {
		src := fmt.Sprintf("127.0.0.%d", 20+i)
		out, err := runIperf3Client(t, port, "-t", "1", "-B", src)
		if err != nil {
			t.Errorf("iperf3 from %s during the flood: %v\n%s", src, err, out)
			continue
		}
		ok++
	}
	t.Logf("%d of 8 iperf3 runs during a flood of 256 silent connections from 8 addresses (%d dialed)", ok, dialed())
}

// holdSlot opens a test from src (cookie sent, PARAM_EXCHANGE read)
// and says nothing more; the channel gets how long the server kept the
// silent connection.
func holdSlot(t *testing.T, port uint16, src string) <-chan time.Duration {
	t.Helper()
	c := dialFrom(t, src, port)
	cookie := newCookie()
	c.Write(cookie[:])
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	if n, err := c.Read(b[:]); n != 1 || state(int8(b[0])) != stParamExchange {
		t.Fatalf("the silent client did not get the slot: %v %v", b, err)
	}
	since := time.Now()
	kept := make(chan time.Duration, 1)
	go func() {
		for {
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := c.Read(b[:]); err != nil {
				break // the server gave up on it (or 30 s passed)
			}
		}
		kept <- time.Since(since)
	}()
	return kept
}

// A client that sends its cookie and then nothing holds the test slot
// for the hello timeout only, and a real client that comes meanwhile
// waits it out instead of being told the server is busy: 8 runs of a
// real iperf3, each started while a silent client holds the slot (the
// probe did it three times in 30 s; here before every run).
func TestServerCookieSilenceNotBusy(t *testing.T) {
	var log lineLog
	port := startServer(t, &Server{Logf: log.logf})
	ok := 0
	var longest time.Duration
	for i := range 8 {
		kept := holdSlot(t, port, fmt.Sprintf("127.0.0.%d", 2+i%3))
		out, err := runIperf3Client(t, port, "-t", "1", "-B", "127.0.0.9")
		if err != nil {
			t.Errorf("run %d while a silent client held the slot: %v\n%s", i+1, err, out)
		} else {
			ok++
		}
		longest = max(longest, <-kept)
	}
	t.Logf("%d of 8 iperf3 runs while a silent client held the slot; each silent client kept at most %v",
		ok, longest.Round(10*time.Millisecond))
	// The hello timeout (2 s) and the refusal's write: a bound, not a
	// measure of speed.
	if longest > 5*time.Second {
		t.Errorf("a silent client held the slot %v", longest)
	}
}
