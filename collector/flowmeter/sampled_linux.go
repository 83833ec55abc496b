package flowmeter

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The sampled meter: an AF_PACKET socket per slave whose classic BPF
// filter keeps 1 in N frames at random (the kernel's random ancillary
// load), and counts each kept frame N times. An ETH_P_ALL socket on a slave
// sees its frames before the bond's receive handler and after the bond's
// transmit choice, like the TC hooks.

// snapLen is enough for Ethernet, a VLAN tag, IPv6 with a fragment header,
// ICMP and the quoted IPv6 header and ports.
const snapLen = 192

// rcvBuf is each sampling socket's receive buffer.
const rcvBuf = 8 << 20

// pollEvery bounds how long a reader takes to notice it was stopped.
const pollEvery = 200 * time.Millisecond

type sampledMeter struct {
	opts Options
	why  string

	mu      sync.Mutex
	flows   map[Key]*Counters
	lost    map[lostKey]*Lost
	readers map[int]*packetReader
	warn    map[int]string
}

type lostKey struct {
	ifindex int
	dir     Direction
}

type packetReader struct {
	name string
	fd   int
	// drops counts samples the socket had no room for (the kernel's
	// PACKET_STATISTICS, which resets as it is read).
	drops uint64
	stop  chan struct{}
	done  chan struct{}
}

// openSampled checks that AF_PACKET sockets can be had (CAP_NET_RAW).
func openSampled(opts Options, why string) (*sampledMeter, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket: %w", err)
	}
	unix.Close(fd)
	return &sampledMeter{
		opts: opts, why: why,
		flows: map[Key]*Counters{}, lost: map[lostKey]*Lost{},
		readers: map[int]*packetReader{}, warn: map[int]string{},
	}, nil
}

// samplingFilter keeps one frame in n, at random, cut to snapLen bytes.
func samplingFilter(n int) ([]bpf.RawInstruction, error) {
	prog := []bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtRand},
		bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: uint32(n)},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 0, SkipTrue: 1},
		bpf.RetConstant{Val: snapLen},
		bpf.RetConstant{Val: 0},
	}
	return bpf.Assemble(prog)
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// openPacketSocket returns a socket on ifindex that sees a sample of its
// frames with their auxiliary data. The filter is in place before the
// socket is bound, so no unsampled frame is queued.
func openPacketSocket(ifindex, n int) (int, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	raw, err := samplingFilter(n)
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	tv := unix.NsecToTimeval(int64(pollEvery))
	// Room for bursts: a queued frame costs its whole buffer, not the
	// snapLen bytes kept. Beyond the system's limit only with
	// CAP_NET_ADMIN, hence no error check.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvBuf) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, rcvBuf)
	}
	for _, err := range []error{
		unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}),
		unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1),
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv),
		unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}),
	} {
		if err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

func (m *sampledMeter) Sync(slaves map[int]string) error {
	m.mu.Lock()
	var stopped []*packetReader
	for ifindex, r := range m.readers {
		if _, ok := slaves[ifindex]; !ok {
			stopped = append(stopped, r)
			delete(m.readers, ifindex)
			delete(m.warn, ifindex)
			m.forget(ifindex)
		}
	}
	var errs []error
	for ifindex, name := range slaves {
		if r, ok := m.readers[ifindex]; ok {
			r.name = name
			continue
		}
		fd, err := openPacketSocket(ifindex, m.opts.SampleRate)
		if err != nil {
			err = fmt.Errorf("%s: sampling socket: %w", name, err)
			m.warn[ifindex] = err.Error()
			errs = append(errs, err)
			continue
		}
		delete(m.warn, ifindex)
		r := &packetReader{name: name, fd: fd, stop: make(chan struct{}), done: make(chan struct{})}
		m.readers[ifindex] = r
		go m.run(ifindex, r)
	}
	m.mu.Unlock()
	for _, r := range stopped {
		r.close()
	}
	return errors.Join(errs...)
}

// forget drops a slave's flows; the caller holds m.mu.
func (m *sampledMeter) forget(ifindex int) {
	for k := range m.flows {
		if k.Ifindex == ifindex {
			delete(m.flows, k)
		}
	}
	delete(m.lost, lostKey{ifindex, Tx})
	delete(m.lost, lostKey{ifindex, Rx})
}

func (r *packetReader) close() {
	close(r.stop)
	<-r.done
	unix.Close(r.fd)
}

// auxdata is struct tpacket_auxdata.
type auxdata struct {
	Status   uint32
	Len      uint32
	Snaplen  uint32
	Mac      uint16
	Net      uint16
	VLANTCI  uint16
	VLANTPID uint16
}

const tpStatusVLANValid = 0x10

func (m *sampledMeter) run(ifindex int, r *packetReader) {
	defer close(r.done)
	buf := make([]byte, snapLen)
	oob := make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(auxdata{}))))
	for {
		select {
		case <-r.stop:
			return
		default:
		}
		n, oobn, _, from, err := unix.Recvmsg(r.fd, buf, oob, 0)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue
			}
			m.mu.Lock()
			m.warn[ifindex] = fmt.Sprintf("%s: reading samples: %v", r.name, err)
			m.mu.Unlock()
			return
		}
		fr := Frame{Data: buf[:n]}
		length := uint32(n)
		if aux, ok := parseAuxdata(oob[:oobn]); ok {
			length = aux.Len
			if aux.Status&tpStatusVLANValid != 0 {
				fr.TagOffloaded, fr.VLAN = true, aux.VLANTCI
			}
		}
		k := Key{Ifindex: ifindex, Direction: Rx}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			k.Direction = Tx
		}
		var src, dst [6]byte
		if ParseFrame(fr, &k, &src, &dst) != nil {
			continue
		}
		m.count(&k, src, dst, length)
	}
}

func parseAuxdata(oob []byte) (auxdata, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return auxdata{}, false
	}
	for _, c := range msgs {
		if c.Header.Level == unix.SOL_PACKET && c.Header.Type == unix.PACKET_AUXDATA && len(c.Data) >= int(unsafe.Sizeof(auxdata{})) {
			return *(*auxdata)(unsafe.Pointer(&c.Data[0])), true
		}
	}
	return auxdata{}, false
}

// count adds one sampled frame of length bytes, as SampleRate frames.
func (m *sampledMeter) count(k *Key, src, dst [6]byte, length uint32) {
	n := uint64(m.opts.SampleRate)
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.flows[*k]
	if c == nil {
		if len(m.flows) >= m.opts.MaxFlows {
			lk := lostKey{k.Ifindex, k.Direction}
			l := m.lost[lk]
			if l == nil {
				l = &Lost{Ifindex: k.Ifindex, Direction: k.Direction}
				m.lost[lk] = l
			}
			l.Bytes += uint64(length) * n
			l.Packets += n
			return
		}
		c = &Counters{FirstSeen: now, Sampled: m.opts.SampleRate > 1}
		m.flows[*k] = c
	}
	c.Bytes += uint64(length) * n
	c.Packets += n
	c.LastSeen = now
	c.SrcMAC, c.DstMAC = src, dst
}

func (m *sampledMeter) Read() (Reading, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	r := Reading{
		Time: now, Source: SourceSampled, SampleRate: m.opts.SampleRate, Why: m.why,
		Attach: "af_packet", MapSize: m.opts.MaxFlows,
		Flows: make([]Flow, 0, len(m.flows)),
	}
	for k, c := range m.flows {
		if now.Sub(c.LastSeen) > m.opts.IdleTimeout {
			delete(m.flows, k)
			continue
		}
		name := ""
		if rd := m.readers[k.Ifindex]; rd != nil {
			name = rd.name
		}
		r.Flows = append(r.Flows, Flow{Key: k, Counters: *c, Slave: name})
	}
	r.MapEntries = len(m.flows)
	for lk, l := range m.lost {
		cp := *l
		if rd := m.readers[lk.ifindex]; rd != nil {
			cp.Slave = rd.name
		}
		r.Lost = append(r.Lost, cp)
	}
	sort.Slice(r.Lost, func(i, j int) bool {
		if r.Lost[i].Ifindex != r.Lost[j].Ifindex {
			return r.Lost[i].Ifindex < r.Lost[j].Ifindex
		}
		return r.Lost[i].Direction < r.Lost[j].Direction
	})
	for _, w := range m.warn {
		r.Warnings = append(r.Warnings, w)
	}
	for _, rd := range m.readers {
		if st, err := unix.GetsockoptTpacketStats(rd.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
			rd.drops += uint64(st.Drops)
		}
		if rd.drops > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %d samples dropped (the sampling socket fell behind): estimates are low", rd.name, rd.drops))
		}
	}
	sort.Strings(r.Warnings)
	return r, nil
}

func (m *sampledMeter) Close() error {
	m.mu.Lock()
	readers := m.readers
	m.readers = map[int]*packetReader{}
	m.mu.Unlock()
	for _, r := range readers {
		r.close()
	}
	return nil
}
