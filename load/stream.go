package load

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stream is one data connection of a test, on either side. Its counters
// are written by the goroutine that moves its data and read by the
// interval sampler, so they are atomic or under mu.
type stream struct {
	id int
	// seq orders the server's streams as the client connected them.
	seq    uint64
	sender bool // this side sends on it
	udp    bool
	conn   net.Conn // TCP, or the client's connected UDP socket
	// The server's UDP streams share one socket: it writes to peer.
	shared *net.UDPConn
	peer   net.Addr
	info   StreamInfo

	bytes atomic.Uint64 // sent or received on this side

	// UDP receive side (jitter per RFC 1889, loss from sequence gaps, as
	// iperf3 counts them) and the UDP send side's sequence number.
	mu          sync.Mutex
	packets     uint64 // highest sequence number seen (receiver), sent (sender)
	lost        int64
	outOfOrder  uint64
	jitter      float64 // seconds
	prevTransit float64
	gotFirst    bool
	// onDatagram and onSend are Config's (client streams only).
	onDatagram func(stream int, seq uint64, at time.Time)
	onSend     func(stream int, seq uint64, at time.Time)

	start, end time.Time
	// retrans is TCP_INFO's count when the sender stopped, -1 unknown.
	retrans int64
	done    chan struct{} // closed when the mover returns
	err     error         // why the mover stopped early, if it did
}

func newStream(id int, sender, udp bool) *stream {
	return &stream{id: id, sender: sender, udp: udp, retrans: -1, done: make(chan struct{})}
}

// recvBuffer is each receiving stream's read size: a read returns what
// the socket holds, so a larger buffer than this buys little and costs
// memory with 128 streams.
const recvBuffer = 256 << 10

// mover is the loop that moves a stream's data until stop is closed (the
// sender) or the peer ends (the receiver).
type mover struct {
	block int
	rate  uint64 // bit/s, 0 = as fast as the path allows
	// readRate paces a TCP receiver's reads (bit/s, 0 = unpaced): TCP's
	// flow control then holds the sender to it.
	readRate uint64
	udp64    bool // 64-bit UDP sequence numbers
	stop     <-chan struct{}
	sendBuf  []byte
	recvSize int
}

// run moves s's data and closes s.done when it stops.
func (m *mover) run(s *stream) {
	defer close(s.done)
	s.start = time.Now()
	var err error
	switch {
	case s.sender && s.udp:
		err = m.sendUDP(s)
	case s.sender:
		err = m.sendTCP(s)
	case s.udp && s.shared == nil:
		err = m.recvUDP(s)
	case s.udp:
		// The server's shared socket is read by its own loop.
		<-m.stop
	default:
		err = m.recvTCP(s)
	}
	s.end = time.Now()
	if err != nil && !isStopErr(err) {
		s.err = err
	}
}

// isStopErr reports the errors a stream ends with when it is stopped on
// purpose: a deadline set to now, or the connection closed under it.
func isStopErr(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF)
}

// pace sleeps until sent bytes are due at rate, or stop. It lets a burst
// of up to a millisecond through: sleeping for less costs more than it
// smooths.
func pace(start time.Time, sent uint64, rate uint64, stop <-chan struct{}) bool {
	if rate == 0 {
		return true
	}
	due := start.Add(time.Duration(float64(sent) * 8 / float64(rate) * float64(time.Second)))
	d := time.Until(due)
	if d < time.Millisecond {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// pacedBlock is the TCP write size at rate: at most 10ms worth of data,
// so a paced stream is smooth at each interval instead of one burst, and
// never less than 4 KiB (the syscalls would cost more than the pacing
// gains).
func pacedBlock(block int, rate uint64) int {
	if rate == 0 {
		return block
	}
	return max(min(block, int(rate/8/100)), min(block, 4<<10))
}

// sendTCP writes whole blocks: large writes are what makes a Go sender as
// fast as iperf3's (the syscall, not the copy, is the cost).
func (m *mover) sendTCP(s *stream) error {
	buf := m.sendBuf[:pacedBlock(len(m.sendBuf), m.rate)]
	var sent uint64
	for !stopped(m.stop) {
		if !pace(s.start, sent, m.rate, m.stop) {
			return nil
		}
		n, err := s.conn.Write(buf)
		sent += uint64(n)
		s.bytes.Add(uint64(n))
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *mover) recvTCP(s *stream) error {
	buf := make([]byte, pacedBlock(m.recvSize, m.readRate))
	var got uint64
	for {
		if !pace(s.start, got, m.readRate, m.stop) {
			return nil
		}
		n, err := s.conn.Read(buf)
		got += uint64(n)
		s.bytes.Add(uint64(n))
		if err != nil {
			return err
		}
	}
}

// sendUDP sends datagrams of m.block bytes that start with the send time
// and a sequence number, which the receiver turns into jitter and loss.
func (m *mover) sendUDP(s *stream) error {
	buf := make([]byte, m.block)
	copy(buf, m.sendBuf)
	var sent, seq uint64
	for !stopped(m.stop) {
		if !pace(s.start, sent, m.rate, m.stop) {
			return nil
		}
		seq++
		now := time.Now()
		putUDPHeader(buf, now, seq, m.udp64)
		var n int
		var err error
		if s.shared != nil {
			n, err = s.shared.WriteTo(buf, s.peer)
		} else {
			n, err = s.conn.Write(buf)
		}
		if err != nil {
			if isNoBufs(err) {
				// The interface queue is full: back off and count
				// the datagram as not sent, as iperf3 does.
				seq--
				time.Sleep(100 * time.Microsecond)
				continue
			}
			return err
		}
		sent += uint64(n)
		s.bytes.Add(uint64(n))
		s.mu.Lock()
		s.packets = seq
		s.mu.Unlock()
		if s.onSend != nil {
			s.onSend(s.id, seq, now)
		}
	}
	return nil
}

func (m *mover) recvUDP(s *stream) error {
	buf := make([]byte, maxUDPBlock+64)
	// A caller timing each datagram (the failover drill) gets the
	// kernel's receive time.
	if s.onDatagram != nil {
		if r := newStampedReader(s.conn); r != nil {
			for {
				n, at, err := r.read(buf)
				if err != nil {
					return err
				}
				s.gotDatagram(buf[:n], at, m.udp64)
			}
		}
	}
	for {
		n, err := s.conn.Read(buf)
		if err != nil {
			return err
		}
		s.gotDatagram(buf[:n], time.Now(), m.udp64)
	}
}

func putUDPHeader(b []byte, t time.Time, seq uint64, wide bool) {
	binary.BigEndian.PutUint32(b[0:], uint32(t.Unix()))
	binary.BigEndian.PutUint32(b[4:], uint32(t.Nanosecond()/1000))
	if wide {
		binary.BigEndian.PutUint64(b[8:], seq)
	} else {
		binary.BigEndian.PutUint32(b[8:], uint32(seq))
	}
}

// gotDatagram counts one received UDP datagram: bytes, loss from gaps in
// the sequence (an out-of-order arrival takes one loss back) and jitter,
// the smoothed change in transit time (clocks need not agree: only the
// differences count).
func (s *stream) gotDatagram(b []byte, now time.Time, wide bool) {
	s.bytes.Add(uint64(len(b)))
	hdr := udpHeaderSize
	if wide {
		hdr = udpHeaderSize64
	}
	if len(b) < hdr {
		return
	}
	sec := binary.BigEndian.Uint32(b[0:])
	usec := binary.BigEndian.Uint32(b[4:])
	var seq uint64
	if wide {
		seq = binary.BigEndian.Uint64(b[8:])
	} else {
		seq = uint64(binary.BigEndian.Uint32(b[8:]))
	}
	if s.onDatagram != nil {
		s.onDatagram(s.id, seq, now)
	}
	sent := float64(sec) + float64(usec)/1e6
	arrived := float64(now.Unix()) + float64(now.Nanosecond())/1e9
	transit := arrived - sent

	s.mu.Lock()
	defer s.mu.Unlock()
	if seq >= s.packets+1 {
		if seq > s.packets+1 {
			s.lost += int64(seq - 1 - s.packets)
		}
		s.packets = seq
	} else {
		s.outOfOrder++
		if s.lost > 0 {
			s.lost--
		}
	}
	if !s.gotFirst {
		s.gotFirst = true
		s.prevTransit = transit
	}
	d := math.Abs(transit - s.prevTransit)
	s.prevTransit = transit
	s.jitter += (d - s.jitter) / 16
}

// udpCounts returns the UDP counters at this instant.
func (s *stream) udpCounts() (packets uint64, lost int64, jitter float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.packets, s.lost, s.jitter
}

// endStreams ends a test's streams the same way on both sides: stop
// tells the senders' loops (and the sampler) to stop, blocked writes
// return at once, the senders get endGrace to finish, and each TCP
// sender's retransmit count is kept before its socket closes. It returns
// the test's end: every byte counted was written before it.
func endStreams(streams []*stream, stop chan struct{}) time.Time {
	close(stop)
	for _, st := range streams {
		if st.sender {
			st.stopSending()
		}
	}
	waitSenders(streams, endGrace)
	end := time.Now()
	for _, st := range streams {
		st.noteRetrans()
	}
	return end
}

// stopSending makes a blocked write return now.
func (s *stream) stopSending() {
	if s.conn != nil {
		s.conn.SetWriteDeadline(time.Now())
	}
}

// noteRetrans keeps the sender's retransmit count before its socket
// closes.
func (s *stream) noteRetrans() {
	if s.sender && !s.udp && s.conn != nil {
		if rt, _, ok := tcpInfo(s.conn); ok {
			s.retrans = int64(rt)
		}
	}
}

func isNoBufs(err error) bool { return errors.Is(err, syscall.ENOBUFS) }

func isAddrBusy(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
