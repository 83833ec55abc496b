package live

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// rtnlBufferSize is the receive buffer of an rtnlConn. The kernel sizes a
// dump's datagrams to at most 32 KiB (netlink_recvmsg caps what it
// remembers of the reader's buffer there), unless one message needs more;
// a datagram larger than the buffer grows it (rtnlConn.receive).
const rtnlBufferSize = 64 << 10

// errReplyTruncated is returned when a reply did not fit the receive
// buffer; the buffer has grown since, and the request can be repeated.
var errReplyTruncated = errors.New("netlink reply larger than the receive buffer")

// rtnlConn is the live source's rtnetlink socket for its requests of every
// tick (the link dump, the slaves' statistics). vishvananda/netlink's
// exchange allocates a 64 KiB buffer, a copy of it and a slice of messages
// on every receive, serialises the request anew and asks the socket's
// address on every request; here the request and the receive buffer are
// kept, and the socket is connected to the kernel, so that plain read and
// write reach it and no other process can put a message in its queue.
// The socket blocks, with a timeout: a wedged kernel answer fails the
// request instead of hanging the sampler. Not safe for concurrent use
// (the live source's mutex serialises it).
type rtnlConn struct {
	fd  int
	pid uint32 // the socket's port id, which the kernel's answers carry
	seq uint32
	req []byte
	buf []byte
}

// openRtnl opens an rtnetlink socket in the calling thread's network
// namespace.
func openRtnl() (*rtnlConn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	c := &rtnlConn{fd: fd, buf: make([]byte, rtnlBufferSize)}
	if err := c.setup(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return c, nil
}

func (c *rtnlConn) setup() error {
	for _, opt := range []int{unix.SO_RCVTIMEO, unix.SO_SNDTIMEO} {
		if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, opt, &netlinkTimeout); err != nil {
			return fmt.Errorf("netlink socket timeout: %w", err)
		}
	}
	if err := unix.Connect(c.fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("connect netlink socket: %w", err)
	}
	sa, err := unix.Getsockname(c.fd)
	if err != nil {
		return fmt.Errorf("netlink socket address: %w", err)
	}
	nsa, ok := sa.(*unix.SockaddrNetlink)
	if !ok {
		return fmt.Errorf("netlink socket address: %T", sa)
	}
	c.pid = nsa.Pid
	return nil
}

// close releases the socket.
func (c *rtnlConn) close() {
	if c != nil && c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// dump sends a dump request of type typ with the given payload (the
// family header, such as struct ifinfomsg) and calls each with every
// answer of type resType, until the kernel says the dump is done. The
// message handed to each lives in the receive buffer: each copies what it
// keeps. A dump the kernel flags as interrupted (the table changed during
// it) returns netlink.ErrDumpInterrupted after the whole answer was read.
func (c *rtnlConn) dump(typ uint16, payload []byte, resType uint16, each func(msg []byte)) error {
	return c.exchange(typ, unix.NLM_F_REQUEST|unix.NLM_F_DUMP, payload, resType, each)
}

// get sends a request of type typ for one object and calls each with the
// answer of type resType.
func (c *rtnlConn) get(typ uint16, payload []byte, resType uint16, each func(msg []byte)) error {
	return c.exchange(typ, unix.NLM_F_REQUEST, payload, resType, each)
}

func (c *rtnlConn) exchange(typ, flags uint16, payload []byte, resType uint16, each func(msg []byte)) error {
	c.seq++
	n := unix.SizeofNlMsghdr + len(payload)
	c.req = append(c.req[:0], make([]byte, unix.SizeofNlMsghdr)...)
	c.req = append(c.req, payload...)
	hdr := (*unix.NlMsghdr)(unsafe.Pointer(&c.req[0]))
	*hdr = unix.NlMsghdr{Len: uint32(n), Type: typ, Flags: flags, Seq: c.seq, Pid: c.pid}
	if err := c.send(); err != nil {
		return err
	}
	interrupted := false
	for {
		b, err := c.receive()
		if err != nil {
			return err
		}
		for len(b) > 0 {
			h, msg, rest, err := nextMsg(b)
			if err != nil {
				c.drain() // the rest of a dump, so that the next one may start
				return err
			}
			b = rest
			if h.Seq != c.seq {
				continue // the late answer of an earlier request that failed
			}
			if h.Flags&unix.NLM_F_DUMP_INTR != 0 {
				interrupted = true
			}
			switch h.Type {
			case unix.NLMSG_DONE, unix.NLMSG_ERROR:
				if len(msg) >= 4 {
					if errno := int32(binary.NativeEndian.Uint32(msg)); errno != 0 {
						return syscall.Errno(-errno)
					}
				}
				if interrupted {
					return netlink.ErrDumpInterrupted
				}
				return nil
			case resType:
				each(msg)
			}
			if h.Flags&unix.NLM_F_MULTI == 0 {
				return nil
			}
		}
	}
}

// nextMsg splits the first netlink message off a datagram: its header,
// its payload, and the rest of the datagram.
func nextMsg(b []byte) (h unix.NlMsghdr, msg, rest []byte, err error) {
	if len(b) < unix.SizeofNlMsghdr {
		return h, nil, nil, fmt.Errorf("netlink: %d bytes left of a datagram, short of a message header", len(b))
	}
	h = unix.NlMsghdr{
		Len:   binary.NativeEndian.Uint32(b[0:4]),
		Type:  binary.NativeEndian.Uint16(b[4:6]),
		Flags: binary.NativeEndian.Uint16(b[6:8]),
		Seq:   binary.NativeEndian.Uint32(b[8:12]),
		Pid:   binary.NativeEndian.Uint32(b[12:16]),
	}
	if h.Len < unix.SizeofNlMsghdr || int64(h.Len) > int64(len(b)) {
		return h, nil, nil, fmt.Errorf("netlink: malformed message (length %d of %d bytes)", h.Len, len(b))
	}
	l := int(h.Len)
	return h, b[unix.SizeofNlMsghdr:l], b[min(nlmAlign(l), len(b)):], nil
}

func nlmAlign(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }

// send writes the request in c.req.
func (c *rtnlConn) send() error {
	for {
		_, err := unix.Write(c.fd, c.req)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("netlink send: %w", err)
		}
		return nil
	}
}

// receive reads one datagram into c.buf. A datagram larger than the
// buffer (MSG_TRUNC gives its real size) grows the buffer, and the rest
// of the answer is drained, so that the next request starts clean.
func (c *rtnlConn) receive() ([]byte, error) {
	for {
		n, err := c.recv(unix.MSG_TRUNC)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return nil, fmt.Errorf("netlink receive: no answer in %ds", netlinkTimeout.Sec)
		case err != nil:
			return nil, fmt.Errorf("netlink receive: %w", err)
		case n > len(c.buf):
			c.buf = make([]byte, nlmAlign(n))
			c.drain()
			return nil, errReplyTruncated
		}
		return c.buf[:n], nil
	}
}

// drain discards what is queued on the socket. The kernel queues the next
// part of a dump while the reader takes the last one, so this reads a
// dump to its end.
func (c *rtnlConn) drain() {
	for {
		n, err := c.recv(unix.MSG_TRUNC | unix.MSG_DONTWAIT)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
	}
}

// recv is recvfrom(2) without the sender's address (the socket is
// connected to the kernel), which x/sys/unix would allocate.
func (c *rtnlConn) recv(flags int) (int, error) {
	r, _, e := unix.Syscall6(unix.SYS_RECVFROM, uintptr(c.fd), uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)), uintptr(flags), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
