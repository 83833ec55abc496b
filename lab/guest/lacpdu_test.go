//go:build linux

package guest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/model"
	"golang.org/x/sys/unix"
)

// countLACPDUs counts, with a packet socket of the test's own, the
// LACPDUs (slow protocol subtype 1) arriving on iface in the root
// namespace until stop is called, which returns the count.
func countLACPDUs(t *testing.T, iface string) (stop func() int) {
	t.Helper()
	idx := Root(t).Link(t, iface).Attrs().Index
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons16(unix.ETH_P_ALL)))
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons16(unix.ETH_P_ALL), Ifindex: idx}); err != nil {
		t.Fatal(err)
	}
	tv := unix.Timeval{Usec: 100_000}
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	var n atomic.Int64
	var done atomic.Bool
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		buf := make([]byte, 2048)
		for !done.Load() {
			m, from, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				continue
			}
			ll, _ := from.(*unix.SockaddrLinklayer)
			if ll != nil && ll.Pkttype != unix.PACKET_OUTGOING && m > 14 && binary.BigEndian.Uint16(buf[12:]) == 0x8809 && buf[14] == 1 {
				n.Add(1)
			}
		}
	}()
	return func() int {
		done.Store(true)
		<-ended
		unix.Close(fd)
		return int(n.Load())
	}
}

func htons16(v uint16) uint16 { return v<<8 | v>>8 }

// lacpduOf is a slave's LACPDU sample, failing the test without one.
func lacpduOf(t *testing.T, snap *model.Snapshot, bond, slave string) *model.LACPDUSample {
	t.Helper()
	s := SlaveIn(t, BondIn(t, snap, bond), slave)
	if s.SwitchSide == nil || s.LACPDU == nil {
		t.Fatalf("bondtop shows no LACPDU counters for %s", slave)
	}
	return s.LACPDU
}

// analyzedBondtop is NewBondtop with the analyzer the CLI runs, so
// snapshots carry findings.
func analyzedBondtop(t *testing.T, bond string) *Bondtop {
	t.Helper()
	src, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	opts := collector.Options{Interval: 200 * time.Millisecond, Bonds: []string{bond}, History: time.Minute, Analyze: diagnose.NewWindow(0).Fill}
	return &Bondtop{Src: src, Sampler: collector.NewSampler(src, opts)}
}

// TestLACPDU: bondtop's LACPDU counters against the LACPDUs a packet
// socket of the test sees on the wire; then the peer bond stops answering
// on one slave, and the silence finding must appear within 3 s of
// lacp_rate fast (plus a sample interval).
func TestLACPDU(t *testing.T) {
	p, _ := lacpPair(t, 95, 2)
	bt := analyzedBondtop(t, p.Bond)

	stop := countLACPDUs(t, p.Slaves[0])
	before := *lacpduOf(t, bt.Sample(t), p.Bond, p.Slaves[0])
	time.Sleep(5 * time.Second)
	after := *lacpduOf(t, bt.Sample(t), p.Bond, p.Slaves[0])
	wire := stop()
	got := int(after.Rx - before.Rx)
	t.Logf("%s: bondtop rx +%d (tx +%d), the wire %d LACPDUs in 5 s", p.Slaves[0], got, after.Tx-before.Tx, wire)
	if wire < 4 || got < wire-1 || got > wire+1 {
		t.Errorf("bondtop counted %d LACPDUs received, the test's socket %d (lacp_rate fast: about 5)", got, wire)
	}
	if after.Tx-before.Tx < 4 || after.IllegalRx != 0 || after.UnknownRx != 0 {
		t.Errorf("tx +%d, illegal %d, unknown %d", after.Tx-before.Tx, after.IllegalRx, after.UnknownRx)
	}
	if after.LastRxAgeSeconds == nil || *after.LastRxAgeSeconds > 1.5 {
		t.Errorf("last LACPDU age %s, want under 1.5 s at lacp_rate fast", Show(after.LastRxAgeSeconds))
	}
	// What the switch's side adds to a tick that reads the LACPDU
	// counters (once a second below a second's pace): one RTM_GETSTATS
	// dump (the carrier counts come from the link dump already read).
	var costs []float64
	counters := map[string]bonding.LACPDUCounters{}
	for range 21 {
		start := time.Now()
		clear(counters)
		if bt.Src.LACPDUCounters(p.Slaves, counters); len(counters) != len(p.Slaves) {
			t.Fatalf("LACPDU counters for %d of %d slaves", len(counters), len(p.Slaves))
		}
		costs = append(costs, float64(time.Since(start).Microseconds()))
	}
	slices.Sort(costs)
	Measure(t, "port_counters_per_tick[slaves=2,median]", costs[len(costs)/2], "us")

	// The partner's LACPDUs, decoded off the wire, against our actor as
	// the kernel's procfs tells it.
	for _, s := range BondIn(t, bt.Sample(t), p.Bond).Slaves {
		pv := s.LACPDU.PartnerView
		if pv == nil || s.Actor == nil {
			t.Errorf("%s: partner view %+v, actor %+v", s.Name, pv, s.Actor)
			continue
		}
		if !Is(s.Actor.SystemMAC, pv.SystemMAC) || !Is(s.Actor.Key, pv.Key) || !Is(s.Actor.PortNumber, pv.Port) {
			t.Errorf("%s: the partner sees system %s key %d port %d; procfs says our actor is %s key %s port %s",
				s.Name, pv.SystemMAC, pv.Key, pv.Port, Show(s.Actor.SystemMAC), Show(s.Actor.Key), Show(s.Actor.PortNumber))
		}
	}
	for _, f := range BondIn(t, bt.Sample(t), p.Bond).Findings {
		if f.ID == diagnose.IDPartnerView {
			t.Errorf("partner view finding on a healthy pair: %+v", f)
		}
		if f.ID == diagnose.IDLACPDUSilent {
			t.Errorf("silence found while the partner talks: %+v", f)
		}
	}

	// The peer bond lets go of far1 (which closes it), and far1 comes
	// back as a plain interface: carrier up, nobody speaking LACP.
	p.Peer.Release(t, p.Far[1])
	p.Peer.Up(t, p.Far[1])
	Eventually(t, 5*time.Second, p.Slaves[1]+" MII up again", func() (bool, string) {
		st := Sysfs(t, p.Slaves[1], "bonding_slave/mii_status")
		return st == "up", st
	})
	silentFrom := time.Now()
	Eventually(t, 10*time.Second, "the lacpdu-silent finding on "+p.Slaves[1], func() (bool, string) {
		b := BondIn(t, bt.Sample(t), p.Bond)
		for _, f := range b.Findings {
			if f.ID == diagnose.IDLACPDUSilent {
				if !slices.Equal(f.Slaves, []string{p.Slaves[1]}) {
					t.Fatalf("silence finding names %v, want %s", f.Slaves, p.Slaves[1])
				}
				return true, f.Message
			}
		}
		s := SlaveIn(t, b, p.Slaves[1])
		if s.SwitchSide == nil || s.LACPDU == nil {
			return false, "no LACPDU counters"
		}
		return false, fmt.Sprintf("rx %d, silent %.1f s", s.LACPDU.Rx, s.LACPDU.SilentSeconds)
	})
	latency := time.Since(silentFrom)
	Measure(t, "lacpdu_silence_finding_latency", latency.Seconds(), "s")
	if latency > 4500*time.Millisecond {
		t.Errorf("finding after %.1f s of silence; want within 3 s plus a sample", latency.Seconds())
	}
}

// TestCarrierFlapUnseen: a slave's carrier toggled twice within one MII
// poll (miimon 1000 ms): the kernel's carrier down count rises by two,
// the bond's link failure count does not, and bondtop reports the flaps.
func TestCarrierFlapUnseen(t *testing.T) {
	p := NewPair(t, 96, 2)
	p.Root.Bond(t, p.Bond, BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer2", MIIMon: 1000}, p.Slaves...)
	bt := analyzedBondtop(t, p.Bond)
	first := SlaveIn(t, BondIn(t, bt.Sample(t), p.Bond), p.Slaves[0])
	if first.SwitchSide == nil || first.Carrier == nil {
		t.Fatal("bondtop shows no carrier counts")
	}
	downBefore := SysfsInt(t, p.Slaves[0], "carrier_down_count")
	failBefore := SysfsInt(t, p.Slaves[0], "bonding_slave/link_failure_count")
	var flapErr error
	for range 2 {
		start := time.Now()
		p.Peer.Down(t, p.Far[0])
		p.Peer.Up(t, p.Far[0])
		if d := time.Since(start); d > 200*time.Millisecond {
			flapErr = errors.Join(flapErr, fmt.Errorf("a toggle took %v", d))
		}
	}
	if flapErr != nil {
		t.Logf("slow toggles (the MII poll may see them): %v", flapErr)
	}
	downAfter := SysfsInt(t, p.Slaves[0], "carrier_down_count")
	failAfter := SysfsInt(t, p.Slaves[0], "bonding_slave/link_failure_count")
	t.Logf("kernel: carrier_down_count %d -> %d, link_failure_count %d -> %d", downBefore, downAfter, failBefore, failAfter)
	if downAfter-downBefore != 2 {
		t.Fatalf("carrier_down_count rose by %d, the scenario wants 2", downAfter-downBefore)
	}
	// A carrier count is no event: below a second's pace the diagnosis
	// judges a bond again once a second (diagnose.Window), so the next
	// sample comes more than a second after the first.
	time.Sleep(1100 * time.Millisecond)
	b := BondIn(t, bt.Sample(t), p.Bond)
	s := SlaveIn(t, b, p.Slaves[0])
	if s.Carrier == nil || int(s.Carrier.Down) != downAfter || int(s.Carrier.Up) != SysfsInt(t, p.Slaves[0], "carrier_up_count") {
		t.Errorf("bondtop carrier %+v, sysfs down %d up %d", s.Carrier, downAfter, SysfsInt(t, p.Slaves[0], "carrier_up_count"))
	}
	var found *model.Finding
	for i, f := range b.Findings {
		if f.ID == diagnose.IDCarrierUnseen {
			found = &b.Findings[i]
		}
	}
	switch {
	case failAfter > failBefore:
		t.Logf("the MII poll saw a flap (link failures +%d): the finding counts only the rest", failAfter-failBefore)
	case found == nil:
		t.Errorf("no %s finding after two unseen flaps: %v", diagnose.IDCarrierUnseen, b.Findings)
	case !slices.Equal(found.Slaves, []string{p.Slaves[0]}):
		t.Errorf("finding names %v, want %s", found.Slaves, p.Slaves[0])
	default:
		t.Logf("finding: %s", found.Message)
	}
}
