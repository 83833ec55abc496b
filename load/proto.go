package load

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"time"
)

// state is one byte of the control connection: the test's next step.
type state int8

// The states of iperf3's control protocol (iperf_api.h).
const (
	stTestStart       state = 1
	stTestRunning     state = 2
	stTestEnd         state = 4
	stParamExchange   state = 9
	stCreateStreams   state = 10
	stServerTerminate state = 11
	stClientTerminate state = 12
	stExchangeResults state = 13
	stDisplayResults  state = 14
	stIperfStart      state = 15
	stIperfDone       state = 16
	stAccessDenied    state = -1
	stServerError     state = -2
)

func (s state) String() string {
	switch s {
	case stTestStart:
		return "TEST_START"
	case stTestRunning:
		return "TEST_RUNNING"
	case stTestEnd:
		return "TEST_END"
	case stParamExchange:
		return "PARAM_EXCHANGE"
	case stCreateStreams:
		return "CREATE_STREAMS"
	case stServerTerminate:
		return "SERVER_TERMINATE"
	case stClientTerminate:
		return "CLIENT_TERMINATE"
	case stExchangeResults:
		return "EXCHANGE_RESULTS"
	case stDisplayResults:
		return "DISPLAY_RESULTS"
	case stIperfStart:
		return "IPERF_START"
	case stIperfDone:
		return "IPERF_DONE"
	case stAccessDenied:
		return "ACCESS_DENIED"
	case stServerError:
		return "SERVER_ERROR"
	}
	return fmt.Sprintf("state(%d)", int8(s))
}

const (
	// cookieSize is 36 characters and a NUL: the test's identity, sent
	// first on the control connection and on every TCP data stream.
	cookieSize = 37
	// maxJSON bounds a control message. Parameters and results of 128
	// streams fit in a few KiB; iperf3's server output option can make
	// results larger, so the client allows more than the server.
	maxJSONServer = 64 << 10
	maxJSONClient = 4 << 20
	// MaxStreams is iperf3's limit on parallel streams.
	MaxStreams = 128
	// udpConnectMsg and udpConnectReply are the UDP "connection" magic:
	// 0x36373839 and 0x39383736 written in host (little-endian) order.
	udpConnectMsg   = "9876"
	udpConnectReply = "6789"
	udpLegacyReply  = "\xb1\x68\xde\x3a" // 987654321, from old servers
	udpHeaderSize   = 12                 // sec, usec, 32-bit sequence
	udpHeaderSize64 = 16                 // with udp_counters_64bit
	defaultPort     = 5201
	// defaultTCPBlock is bondtop's write size: 1 MiB writes cost an
	// eighth of iperf3's 128 KiB syscalls, which on loopback is the rate.
	defaultTCPBlock  = 1 << 20
	maxTCPBlock      = 1 << 20
	defaultUDPBlock  = 1460
	maxUDPBlock      = 65535 - 8 - 20
	defaultUDPRate   = 1 << 20 // bit/s per stream, iperf3's default for UDP
	ieNumStreams     = 6
	ieBlockSize      = 7
	ieDuration       = 5
	ieAccessDenied   = 121
	ieStreamListen   = 202
	ieRecvParams     = 114
	ieProtocol       = 131
	ieUDPBlockSize   = 20
	ieReverseBidir   = 25
	ieMessage        = 110
	ieClientTerm     = 119
	ieServerTerm     = 120
	ieStreamConnect  = 203
	ieStreamAccept   = 204
	ieRecvResults    = 117
	ieTotalRate      = 27
	ieInitTest       = 101
	ieCtrlClose      = 109
	ieNoMsg          = 144
	ieStreamID       = 208
	ieStreamRead     = 206
	ieStreamWrite    = 205
	ieSendResults    = 116
	ieCreateStream   = 200
	ieAuthTest       = 142
	ieSetCongestion  = 134
	ieBindDev        = 143
	ieBufSize        = 8
	ieMSS            = 10
	ieSetBuf         = 124
	ieSetBuf2        = 141
	ieListen         = 102
	ieAccept         = 104
	ieRecvCookie     = 106
	ieSetPacing      = 140
	ieSetDontFrag    = 145
	ieSetTOS         = 125
	ieSetFlow        = 127
	ieSetMSS         = 123
	ieSetNoDelay     = 122
	ieSetWindowSize  = 130
	ieBadTOS         = 21
	ieOmit           = 12
	ieBurst          = 15
	ieEndConditions  = 16
	ieUnimplemented  = 13
	ieNewTest        = 100
	ieFile           = 14
	ieSetUserTimeout = 148
)

// serverErrors says in words what an iperf3 server's SERVER_ERROR codes
// (i_errno) mean, for the ones a server sends.
var serverErrors = map[int32]string{
	ieDuration:       "the test is longer than the server allows",
	ieNumStreams:     "more parallel streams than the server allows",
	ieBlockSize:      "the block size is larger than the server allows",
	ieBufSize:        "the socket buffer size is larger than the server allows",
	ieMSS:            "the MSS is larger than the server allows",
	ieOmit:           "the server rejected the omit value",
	ieUnimplemented:  "the server does not implement a requested option",
	ieFile:           "the server could not open its file",
	ieBurst:          "the server rejected the burst count",
	ieEndConditions:  "the server rejected the end conditions (time, bytes, blocks)",
	ieUDPBlockSize:   "the server rejected the UDP block size",
	ieBadTOS:         "the server rejected the TOS value",
	ieReverseBidir:   "a test cannot be both reverse and bidirectional",
	ieTotalRate:      "the requested rate is above the server's limit",
	ieNewTest:        "the server could not create a test",
	ieInitTest:       "the server could not initialise the test",
	ieListen:         "the server could not listen",
	ieAccept:         "the server could not accept the connection",
	ieRecvCookie:     "the server did not receive the test's cookie",
	ieCtrlClose:      "the control connection closed",
	ieMessage:        "the server received a message it does not know",
	ieRecvParams:     "the server could not read the test parameters",
	ieRecvResults:    "the server could not read the results",
	ieSendResults:    "the server could not send its results",
	ieClientTerm:     "the client terminated the test",
	ieServerTerm:     "the server terminated the test",
	ieAccessDenied:   "the server is busy running a test",
	ieSetNoDelay:     "the server could not set TCP_NODELAY",
	ieSetMSS:         "the server could not set the MSS",
	ieSetBuf:         "the server could not set the socket buffer size",
	ieSetBuf2:        "the server's socket buffer size is not the one asked for",
	ieSetTOS:         "the server could not set the TOS",
	ieSetFlow:        "the server could not set the IPv6 flow label",
	ieSetWindowSize:  "the server could not set the window size",
	ieProtocol:       "the server does not support the protocol",
	ieSetCongestion:  "the server could not set the congestion control algorithm",
	ieAuthTest:       "the server requires authentication (iperf3 --username/--rsa-public-key-path), which bondtop does not do",
	ieBindDev:        "the server could not bind to its device",
	ieNoMsg:          "the server received nothing for too long",
	ieSetPacing:      "the server could not set the pacing rate",
	ieSetDontFrag:    "the server could not set don't-fragment",
	ieSetUserTimeout: "the server could not set TCP_USER_TIMEOUT",
	ieCreateStream:   "the server could not create a stream",
	ieStreamListen:   "the server could not listen for data streams (is the UDP port free on the server?)",
	ieStreamConnect:  "the server could not connect a stream",
	ieStreamAccept:   "the server could not accept a stream",
	ieStreamWrite:    "the server could not write to a stream",
	ieStreamRead:     "the server could not read from a stream",
	ieStreamID:       "the server saw a stream id it does not know",
}

// ServerError is a SERVER_ERROR from the peer: its iperf3 error code and
// the errno behind it.
type ServerError struct {
	Code  int32
	Errno int32
}

func (e *ServerError) Error() string {
	what, ok := serverErrors[e.Code]
	if !ok {
		what = fmt.Sprintf("iperf3 error %d", e.Code)
	}
	s := "server error: " + what
	if e.Errno > 0 && e.Errno < 4096 {
		s += " (" + errnoString(e.Errno) + ")"
	}
	return s
}

// newCookie returns 36 random characters of iperf3's alphabet and a NUL.
func newCookie() [cookieSize]byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	var c [cookieSize]byte
	rand.Read(c[:cookieSize-1])
	for i := range cookieSize - 1 {
		c[i] = alphabet[c[i]%32]
	}
	return c
}

// validCookie reports whether b looks like a cookie: printable, NUL-ended.
// Other clients may use other alphabets, so only the shape is checked.
func validCookie(b []byte) bool {
	if len(b) != cookieSize || b[cookieSize-1] != 0 {
		return false
	}
	for _, c := range b[:cookieSize-1] {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// ctrl is a control connection with a deadline on every step, so a peer
// that stops talking costs a timeout, never a goroutine forever.
type ctrl struct {
	c       net.Conn
	timeout time.Duration
	maxJSON int
}

func (c *ctrl) deadline(d time.Duration) {
	if d <= 0 {
		d = c.timeout
	}
	c.c.SetDeadline(time.Now().Add(d))
}

// writeState sends one state byte.
func (c *ctrl) writeState(s state) error {
	c.deadline(0)
	if _, err := c.c.Write([]byte{byte(s)}); err != nil {
		return fmt.Errorf("sending %v: %w", s, err)
	}
	return nil
}

// readState waits up to d (the step timeout when 0) for a state byte.
func (c *ctrl) readState(d time.Duration) (state, error) {
	c.deadline(d)
	var b [1]byte
	if _, err := io.ReadFull(c.c, b[:]); err != nil {
		return 0, err
	}
	return state(int8(b[0])), nil
}

// writeJSON sends v as a length-prefixed JSON message.
func (c *ctrl) writeJSON(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	msg := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(msg, uint32(len(body)))
	msg = append(msg, body...)
	c.deadline(0)
	_, err = c.c.Write(msg)
	return err
}

// readJSON reads one length-prefixed JSON message into v.
func (c *ctrl) readJSON(v any) error {
	c.deadline(0)
	body, err := readMessage(c.c, c.maxJSON)
	if err != nil {
		return err
	}
	return decodeLenient(body, v)
}

// readMessage reads a 4-byte big-endian length and that many bytes, at
// most max: a garbage length fails at once instead of allocating.
func readMessage(r io.Reader, max int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || int64(n) > int64(max) {
		return nil, fmt.Errorf("control message of %d bytes (at most %d): not an iperf3 peer?", n, max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("control message cut short: %w", err)
	}
	return body, nil
}

// decodeLenient decodes a JSON object, with numbers read by the lenient
// num type wherever v asks for one.
func decodeLenient(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("control message is not the JSON expected: %w", err)
	}
	return nil
}
