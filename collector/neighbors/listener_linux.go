package neighbors

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Listener keeps a receive-only packet socket on each watched slave and
// the neighbours heard there. Safe for concurrent use.
type Listener struct {
	*table
	mu    sync.Mutex
	socks map[string]*Conn // by slave name
	wg    sync.WaitGroup
}

// NewListener makes a listener that watches nothing yet; clock is
// time.Now when nil.
func NewListener(clock func() time.Time) *Listener {
	return &Listener{table: newTable(clock), socks: make(map[string]*Conn)}
}

// ErrNoPermission means the packet sockets need CAP_NET_RAW.
var ErrNoPermission = errors.New("listening for LLDP/CDP needs CAP_NET_RAW (run as root)")

// Watch makes the listener follow exactly these slaves: sockets open on
// new ones and close on those gone. The error joins every slave it could
// not listen on; ErrNoPermission is among them when that is the reason.
func (l *Listener) Watch(slaves []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for name, c := range l.socks {
		if !slices.Contains(slaves, name) {
			c.Close()
			delete(l.socks, name)
			l.forget(name)
		}
	}
	for _, name := range slaves {
		if l.socks[name] != nil {
			continue
		}
		c, err := ListenInterface(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l.socks[name] = c
		l.wg.Add(1)
		go l.read(name, c)
	}
	return errors.Join(errs...)
}

// read feeds the table from one socket until it closes.
func (l *Listener) read(name string, c *Conn) {
	defer l.wg.Done()
	buf := make([]byte, snapLen)
	for {
		n, err := c.ReadFrame(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return
			}
			time.Sleep(100 * time.Millisecond) // e.g. ENETDOWN while the slave is down
			continue
		}
		l.frame(name, buf[:n])
	}
}

// Close closes every socket and waits for their readers.
func (l *Listener) Close() error {
	l.mu.Lock()
	for name, c := range l.socks {
		c.Close()
		delete(l.socks, name)
	}
	l.mu.Unlock()
	l.wg.Wait()
	return nil
}

// Conn is one slave's receive-only packet socket.
type Conn struct {
	f *os.File
	// closed is set by Close: the poller then fails a raw read with its
	// own "use of closed file" error, which is not os.ErrClosed.
	closed atomic.Bool
}

// ListenInterface opens a packet socket on the interface called name that
// receives, with Filter, the LLDP, CDP and slow-protocol frames that
// arrive there (not those this host sends). ETH_P_ALL makes it a tap that
// runs before the bond's receive handler, so it hears inactive slaves
// too, and LACPDUs, which the bond consumes.
func ListenInterface(name string) (*Conn, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", name, err)
	}
	prog, err := bpf.Assemble(Filter())
	if err != nil {
		return nil, fmt.Errorf("listen on %s: assemble filter: %w", name, err)
	}
	// Protocol 0 until the filter is in place, so no unfiltered frame of
	// another interface is queued in between.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("listen on %s: %w", name, ErrNoPermission)
		}
		return nil, fmt.Errorf("listen on %s: packet socket: %w", name, err)
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, ins := range prog {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen on %s: attach filter: %w", name, err)
	}
	// Our own LACPDUs are no news; kernels before 4.20 lack the option and
	// ReadFrame drops outgoing frames itself.
	_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
	sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen on %s: bind: %w", name, err)
	}
	return &Conn{f: os.NewFile(uintptr(fd), "packet:"+name)}, nil
}

// ReadFrame blocks until a frame arrives and copies it into buf.
func (c *Conn) ReadFrame(buf []byte) (int, error) {
	rc, err := c.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	for {
		var n int
		var from unix.Sockaddr
		var rerr error
		err = rc.Read(func(fd uintptr) bool {
			n, from, rerr = unix.Recvfrom(int(fd), buf, 0)
			return !errors.Is(rerr, unix.EAGAIN)
		})
		if c.closed.Load() {
			return 0, os.ErrClosed
		}
		if err != nil {
			return 0, err
		}
		if rerr != nil {
			return 0, rerr
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		return n, nil
	}
}

// Close closes the socket; a blocked ReadFrame returns os.ErrClosed.
func (c *Conn) Close() error {
	c.closed.Store(true)
	return c.f.Close()
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
