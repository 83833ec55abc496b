package load

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Defaults and limits of a test.
const (
	DefaultDuration = 10 * time.Second
	// MaxDuration ends even a test "until stopped": nobody means to
	// load a production bond for more than an hour by accident.
	MaxDuration     = time.Hour
	DefaultInterval = time.Second
	DefaultPort     = defaultPort
	// DefaultStepTimeout bounds each step of the control protocol.
	DefaultStepTimeout = 10 * time.Second
)

// Protocol is the data streams' transport.
type Protocol uint8

// The protocols iperf3 and bondtop share.
const (
	TCP Protocol = iota
	UDP
)

func (p Protocol) String() string {
	if p == UDP {
		return "udp"
	}
	return "tcp"
}

// Direction says which way the data flows.
type Direction uint8

// The directions of a test, from this host's point of view.
const (
	Send          Direction = iota // this host sends (iperf3's default)
	Receive                        // the server sends (iperf3 -R)
	Bidirectional                  // both (iperf3 --bidir)
)

func (d Direction) String() string {
	switch d {
	case Receive:
		return "receive"
	case Bidirectional:
		return "bidirectional"
	}
	return "send"
}

// Config describes a test. The zero value of each field is its default.
type Config struct {
	// Target is the server's address (an IP address, or a host name
	// resolved once when the test starts); Port its control port
	// (DefaultPort when 0). Data goes to this address and no other.
	Target string
	Port   uint16
	// Protocol is TCP or UDP; Streams the number of parallel streams in
	// each direction (1 when 0, at most MaxStreams).
	Protocol Protocol
	Streams  int
	// Duration of the test (DefaultDuration when 0). UntilStopped asks
	// the server for an open-ended test (iperf3 -t 0) that ends on Stop,
	// or at MaxDuration.
	Duration     time.Duration
	UntilStopped bool
	Direction    Direction
	// Rate limits each stream to this many bits per second (iperf3 -b);
	// 0 is as fast as possible for TCP, iperf3's 1 Mbit/s for UDP.
	Rate uint64
	// BlockSize is the size of each write (TCP: 1 MiB when 0, at most
	// 1 MiB) or datagram (UDP: the control connection's MSS when 0).
	BlockSize int
	// Interval between live statistics (DefaultInterval when 0).
	Interval time.Duration
	// Source binds the streams (and the control connection) to this
	// address: the bond's, so the traffic leaves through it.
	Source netip.Addr
	// SourcePorts are the candidate source ports of each stream that
	// sends, in stream order, best first (see Placement.Plan); a stream
	// without candidates gets FirstPort+i, or a port from the kernel.
	// PredictedSlaves names the slave each stream's first candidate is
	// predicted to leave by; it is only reported.
	SourcePorts     [][]uint16
	PredictedSlaves []string
	FirstPort       uint16
	// StepTimeout bounds every step of the control protocol
	// (DefaultStepTimeout when 0).
	StepTimeout time.Duration
	// ControlKeepAlive is the control connection's TCP keep-alive period:
	// 0 is Go's default (a probe after 15 s idle), negative none. A host
	// that must stay silent through a long test (the failover drill's
	// receive side) turns it off.
	ControlKeepAlive time.Duration
	// OnDatagram, when set, sees every UDP datagram this host receives:
	// the stream's id, the datagram's sequence number and when it
	// arrived. The failover drill times outages with it, to the packet.
	// It runs on the receiving goroutine, so it must be quick.
	OnDatagram func(stream int, seq uint64, at time.Time)
	// OnSend, when set, sees every UDP datagram this host sends, when it
	// was handed to the kernel: with the peer's loss count it tells how
	// long the datagrams lost on the way took to send.
	OnSend func(stream int, seq uint64, at time.Time)
}

// withDefaults validates c and fills in its defaults. It does no I/O, so
// a form can call it (through Validate) on every key press.
func (c Config) withDefaults() (Config, error) {
	if c.Target == "" {
		return c, errors.New("no target: give the address of an iperf3 server (iperf3 -s, or bondtop serve)")
	}
	if strings.ContainsAny(c.Target, " /\\\x00") {
		return c, fmt.Errorf("%q is not a host name or address", c.Target)
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Streams == 0 {
		c.Streams = 1
	}
	if c.Streams < 0 || c.Streams > MaxStreams {
		return c, fmt.Errorf("%d streams: give 1 to %d", c.Streams, MaxStreams)
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.UntilStopped {
		c.Duration = MaxDuration
	}
	if c.Duration < 0 || c.Duration > MaxDuration {
		return c, fmt.Errorf("duration %v: give 1s to %v", c.Duration, MaxDuration)
	}
	if c.Duration < time.Second {
		// iperf3 counts whole seconds.
		return c, fmt.Errorf("duration %v: at least 1s", c.Duration)
	}
	if c.Protocol > UDP {
		return c, errors.New("protocol: tcp or udp")
	}
	if c.Direction > Bidirectional {
		return c, errors.New("direction: send, receive or bidirectional")
	}
	if c.Protocol == UDP && c.Rate == 0 {
		c.Rate = defaultUDPRate
	}
	switch {
	case c.BlockSize < 0:
		return c, fmt.Errorf("block size %d: must be positive", c.BlockSize)
	case c.Protocol == TCP && c.BlockSize == 0:
		c.BlockSize = defaultTCPBlock
	case c.Protocol == TCP && c.BlockSize > maxTCPBlock:
		return c, fmt.Errorf("block size %d: at most %d for TCP", c.BlockSize, maxTCPBlock)
	case c.Protocol == UDP && c.BlockSize != 0 && (c.BlockSize < udpHeaderSize64 || c.BlockSize > maxUDPBlock):
		return c, fmt.Errorf("datagram size %d: give %d to %d", c.BlockSize, udpHeaderSize64, maxUDPBlock)
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Interval < 100*time.Millisecond {
		return c, fmt.Errorf("interval %v: at least 100ms", c.Interval)
	}
	if c.StepTimeout == 0 {
		c.StepTimeout = DefaultStepTimeout
	}
	if len(c.SourcePorts) > 0 && c.FirstPort != 0 {
		return c, errors.New("a first source port and planned source ports exclude each other")
	}
	if c.FirstPort != 0 && int(c.FirstPort)+2*c.Streams > 65536 {
		return c, fmt.Errorf("first source port %d: %d streams need ports up to %d", c.FirstPort, c.Streams, int(c.FirstPort)+2*c.Streams-1)
	}
	return c, nil
}

// Validate checks c as Start would, without starting anything.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// ParseTarget reads HOST, HOST:PORT, [V6] or [V6]:PORT. The host is not
// resolved.
func ParseTarget(s string) (host string, port uint16, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", 0, errors.New("no target: give HOST or HOST:PORT")
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return a.String(), 0, nil
	}
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		if strings.Contains(s, ":") {
			return "", 0, fmt.Errorf("%q: want HOST, HOST:PORT or [IPv6]:PORT", s)
		}
		return s, 0, validHost(s)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("%q: port %q is not 1 to 65535", s, p)
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.String(), uint16(n), nil
	}
	return h, uint16(n), validHost(h)
}

func validHost(h string) error {
	if h == "" || len(h) > 253 {
		return fmt.Errorf("%q is not a host name", h)
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Errorf("%q is not a host name or address", h)
		}
	}
	return nil
}

// ParseRate reads a rate in bits per second with an optional K, M or G
// (powers of 1000, as iperf3 -b), e.g. 500M, 2.5G, 100000.
func ParseRate(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	orig := s
	mult := 1.0
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'g', 'G':
			mult = 1e9
		case 't', 'T':
			mult = 1e12
		}
		if mult != 1 {
			s = s[:len(s)-1]
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*mult > 1e15 {
		return 0, fmt.Errorf("rate %q: want bits per second, e.g. 100M or 2.5G", orig)
	}
	return uint64(f * mult), nil
}
