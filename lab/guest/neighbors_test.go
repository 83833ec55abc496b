//go:build linux

package guest

import (
	"encoding/binary"
	"fmt"
	"net"
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
	l := ns.Link(t, iface)
	frame := sp.frame(l.Attrs().HardwareAddr)
	err := ns.Do(func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		to := &unix.SockaddrLinklayer{Ifindex: l.Attrs().Index, Halen: 6}
		copy(to.Addr[:], frame[:6])
		return unix.Sendto(fd, frame, 0, to)
	})
	if err != nil {
		t.Fatalf("send LLDP on %s: %v", iface, err)
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
