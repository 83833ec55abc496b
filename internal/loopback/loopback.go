// Package loopback owns test helpers for servers on 127.0.0.1: a port that
// is free for TCP and UDP at once, as an iperf3 server needs.
package loopback

import (
	"fmt"
	"net"
	"testing"
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
