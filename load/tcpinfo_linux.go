package load

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tcpInfo reads the kernel's TCP_INFO of c: the retransmitted segments
// over the connection's life and the smoothed round-trip time.
func tcpInfo(c net.Conn) (retrans uint64, rtt time.Duration, ok bool) {
	sc, isSys := c.(syscall.Conn)
	if !isSys {
		return 0, 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, 0, false
	}
	var info *unix.TCPInfo
	cerr := raw.Control(func(fd uintptr) {
		info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	})
	if cerr != nil || err != nil {
		return 0, 0, false
	}
	return uint64(info.Total_retrans), time.Duration(info.Rtt) * time.Microsecond, true
}

// hasTCPInfo says whether this platform reports retransmits.
const hasTCPInfo = true

// tcpMSS is the connection's maximum segment size, 0 when unknown: the
// default UDP datagram size, so datagrams are not fragmented.
func tcpMSS(c net.Conn) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	mss := 0
	raw.Control(func(fd uintptr) {
		mss, err = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG)
	})
	if err != nil || mss <= 0 || mss > maxUDPBlock {
		return 0
	}
	return mss
}
