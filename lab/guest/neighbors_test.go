//go:build linux

package guest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// switchPort is what a peer port says about itself in LLDP.
type switchPort struct {
	chassis  net.HardwareAddr
	system   string
	port     string
	maxFrame int  // 0: no 802.3 maximum frame size TLV
	lag      bool // 802.1 link aggregation: enabled
	pvid     int
}

// frame builds the LLDP frame a switch port would send (IEEE 802.1AB).
func (sp switchPort) frame(src net.HardwareAddr) []byte {
	f := append([]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}, src...)
	f = append(f, 0x88, 0xcc)
	add := func(typ int, v []byte) {
		f = binary.BigEndian.AppendUint16(f, uint16(typ)<<9|uint16(len(v)))
		f = append(f, v...)
	}
	add(1, append([]byte{4}, sp.chassis...))
	add(2, append([]byte{5}, sp.port...))
	add(3, []byte{0, 120})
	add(5, []byte(sp.system))
	add(127, []byte{0x00, 0x80, 0xc2, 1, byte(sp.pvid >> 8), byte(sp.pvid)})
	status := byte(1)
	if sp.lag {
		status |= 2
	}
	add(127, []byte{0x00, 0x80, 0xc2, 7, status, 0, 0, 0, 9})
	if sp.maxFrame > 0 {
		add(127, []byte{0x00, 0x12, 0x0f, 4, byte(sp.maxFrame >> 8), byte(sp.maxFrame)})
	}
	add(0, nil)
	return f
}

// sendLLDP sends sp's frame out of iface in ns, as the switch would.
func sendLLDP(t *testing.T, ns *NS, iface string, sp switchPort) {
	t.Helper()
	if err := lldpSender(t, ns, iface)(sp); err != nil {
		t.Fatalf("send LLDP on %s: %v", iface, err)
	}
}

// lldpSender returns a function that sends a switch port's frame out of
// iface in ns; it may run on any goroutine.
func lldpSender(t *testing.T, ns *NS, iface string) func(switchPort) error {
	t.Helper()
	l := ns.Link(t, iface)
	idx, src := l.Attrs().Index, l.Attrs().HardwareAddr
	return func(sp switchPort) error {
		frame := sp.frame(src)
		return ns.Do(func() error {
			fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			to := &unix.SockaddrLinklayer{Ifindex: idx, Halen: 6}
			copy(to.Addr[:], frame[:6])
			return unix.Sendto(fd, frame, 0, to)
		})
	}
}

// TestNeighbors: the peer's two ports send LLDP as two different switches
// (one with a maximum frame size below the bond's MTU), through the real
// bonding driver on an 802.3ad bond and on an active-backup bond's backup
// slave; bondtop must show each slave's own switch port.
func TestNeighbors(t *testing.T) {
	ports := []switchPort{
		{chassis: net.HardwareAddr{0x02, 0xaa, 0, 0, 0, 1}, system: "leaf-a", port: "Ethernet1/1", maxFrame: 1522, lag: true, pvid: 10},
		{chassis: net.HardwareAddr{0x02, 0xbb, 0, 0, 0, 2}, system: "leaf-b", port: "Ethernet1/2", maxFrame: 9216, pvid: 20},
	}
	check := func(t *testing.T, p *Pair) {
		bt := NewBondtop(t, 200*time.Millisecond, p.Bond)
		bt.Sample(t) // opens the sockets
		sent := time.Now()
		for i, sp := range ports {
			sendLLDP(t, p.Peer, p.Far[i], sp)
		}
		Eventually(t, 5*time.Second, "bondtop hears both switches", func() (bool, string) {
			b := BondIn(t, bt.Sample(t), p.Bond)
			if b.NeighborsWhy != nil {
				t.Fatalf("bondtop cannot listen as root: %s", *b.NeighborsWhy)
			}
			var seen []string
			ok := true
			for i := range p.Slaves {
				s := SlaveIn(t, b, p.Slaves[i])
				if s.SwitchSide == nil || s.Neighbor == nil {
					seen = append(seen, s.Name+": none")
					ok = false
					continue
				}
				n := s.Neighbor
				seen = append(seen, fmt.Sprintf("%s: %s %s", s.Name, Show(n.SystemName), n.PortID))
				ok = ok && Is(n.SystemName, ports[i].system) && n.PortID == ports[i].port
			}
			return ok, fmt.Sprint(seen)
		})
		b := BondIn(t, bt.Sample(t), p.Bond)
		for i := range p.Slaves {
			n := SlaveIn(t, b, p.Slaves[i]).Neighbor
			sp := ports[i]
			if n.ChassisID != sp.chassis.String() || !Is(n.MaxFrameSize, sp.maxFrame) || !Is(n.PortVLANID, sp.pvid) ||
				n.Aggregation == nil || n.Aggregation.Enabled != sp.lag || n.TTLSeconds != 120 {
				t.Errorf("%s: %+v, sent %+v", p.Slaves[i], n, sp)
			}
			if n.AgeSeconds < 0 || n.AgeSeconds > time.Since(sent).Seconds() {
				t.Errorf("%s: age %.2f s, sent %.2f s ago", p.Slaves[i], n.AgeSeconds, time.Since(sent).Seconds())
			}
		}
	}
	t.Run("802.3ad", func(t *testing.T) {
		p, _ := lacpPair(t, 93, 2)
		check(t, p)
	})
	t.Run("active-backup", func(t *testing.T) {
		// The backup slave's frames are dropped by the bond: the tap must
		// hear them before that.
		p := NewPair(t, 94, 2)
		p.Root.Bond(t, p.Bond, BondSpec{Mode: "active-backup", MIIMon: 100}, p.Slaves...)
		check(t, p)
		if st := Sysfs(t, p.Slaves[1], "bonding_slave/state"); st != "backup" {
			t.Errorf("%s is %s, the scenario wants it backup", p.Slaves[1], st)
		}
	})
}

// TestNeighborsUnprivileged: the real bondtop binary as nobody (no
// CAP_NET_RAW) reports every slave's neighbour as null with the reason at
// the bond, and everything else as before; as root it hears the switch.
func TestNeighborsUnprivileged(t *testing.T) {
	if _, err := os.Stat(bondtopBin); err != nil {
		t.Fatalf("%s missing from the initramfs: %v", bondtopBin, err)
	}
	p, _ := lacpPair(t, 97, 2)
	// The switch keeps talking while each run listens.
	stop, stopped := make(chan struct{}), make(chan struct{})
	defer func() { close(stop); <-stopped }()
	var senders []func(switchPort) error
	for i := range p.Far {
		senders = append(senders, lldpSender(t, p.Peer, p.Far[i]))
	}
	go func() {
		defer close(stopped)
		for {
			for i, send := range senders {
				_ = send(switchPort{chassis: net.HardwareAddr{0x02, 0xcc, 0, 0, 0, byte(i)}, system: "leaf-c", port: fmt.Sprintf("Ethernet%d", i+1)})
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	type out struct {
		Bonds []struct {
			NeighborsWhy *string `json:"neighbors_why"`
			Mode         string  `json:"mode"`
			Slaves       []struct {
				Name     string               `json:"name"`
				Neighbor *json.RawMessage     `json:"neighbor"`
				LACPDU   *struct{ Rx uint64 } `json:"lacpdu"`
			} `json:"slaves"`
		} `json:"bonds"`
	}
	run := func(asNobody bool) (out, string) {
		cmd := exec.Command(bondtopBin, "--once", "--json", "--interval", "500ms", p.Bond)
		if asNobody {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("bondtop --once --json (nobody %v): %v: %s", asNobody, err, stderrOf(err))
		}
		var o out
		if err := json.Unmarshal(b, &o); err != nil || len(o.Bonds) != 1 {
			t.Fatalf("bondtop JSON: %v: %s", err, b)
		}
		return o, string(b)
	}
	nobody, raw := run(true)
	b := nobody.Bonds[0]
	if b.NeighborsWhy == nil || !strings.Contains(*b.NeighborsWhy, "CAP_NET_RAW") {
		t.Errorf("nobody: neighbors_why %v, want the missing CAP_NET_RAW", Show(b.NeighborsWhy))
	}
	if !strings.Contains(raw, `"neighbor": null`) && !strings.Contains(raw, `"neighbor":null`) {
		t.Errorf("nobody: the slaves' neighbor keys are not null:\n%s", raw)
	}
	for _, s := range b.Slaves {
		if s.Neighbor != nil {
			t.Errorf("nobody: %s has a neighbour %s", s.Name, *s.Neighbor)
		}
		if s.LACPDU == nil || s.LACPDU.Rx == 0 {
			t.Errorf("nobody: %s LACPDU counters %+v (RTM_GETSTATS needs no privilege)", s.Name, s.LACPDU)
		}
	}
	if b.Mode != "802.3ad" || len(b.Slaves) != 2 {
		t.Errorf("nobody: mode %s with %d slaves", b.Mode, len(b.Slaves))
	}
	root, _ := run(false)
	if r := root.Bonds[0]; r.NeighborsWhy != nil {
		t.Errorf("root: neighbors_why %s", *r.NeighborsWhy)
	} else {
		heard := 0
		for _, s := range r.Slaves {
			if s.Neighbor != nil {
				heard++
			}
		}
		if heard != 2 {
			t.Errorf("root: %d of 2 slaves heard the switch sending every 200 ms", heard)
		}
	}
}
