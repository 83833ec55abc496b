//go:build !linux

package load

import (
	"net"
	"time"
)

// tcpInfo is Linux's TCP_INFO; elsewhere retransmits and RTT are unknown.
func tcpInfo(net.Conn) (uint64, time.Duration, bool) { return 0, 0, false }

const hasTCPInfo = false

func tcpMSS(net.Conn) int { return 0 }
