// Package loopback owns test helpers for servers on 127.0.0.1: a port that
// is free for TCP and UDP at once, as an iperf3 server needs, and a run of
// ports a client can be told to bind.
package loopback

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FreePort returns a TCP port free on 127.0.0.1 now whose UDP twin is free
// too (iperf3 and bondtop serve listen on both).
func FreePort(t testing.TB) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		l.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

// FreeRun returns the first of n consecutive TCP ports free on 127.0.0.1,
// below the kernel's range of ephemeral ports: a port from that range
// (FreePort's) may be handed to another connection's automatic source
// port between the choice and the bind, when tests run side by side,
// while no automatic port lands below it. For a client told to bind
// given source ports (iperf3's --cport).
func FreeRun(t testing.TB, n int) int {
	t.Helper()
	low := ephemeralLow()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
	for range 50 {
		first := 10000 + r.IntN(max(low-10000-n, 1))
		var held []net.Listener
		for p := first; p < first+n; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				break
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Close()
		}
		if len(held) == n {
			return first
		}
	}
	t.Fatalf("no %d consecutive free ports below %d", n, low)
	return 0
}

// ephemeralLow is the first port of the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), 32768 when it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil || low <= 10000 {
		return 32768
	}
	return low
}
