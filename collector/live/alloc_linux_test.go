package live

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/bondtop/bondtop/model"
)

// builtLive is the live source without sockets, as a Source: each Read
// builds, as after a dump, a 4-slave 802.3ad bond from link messages
// whose counters move in place (each tick's dump a message like the last
// but for its counters), over a fixture tree. The LACPDU counters, which
// a kernel without the bonding driver (this host) cannot give, rise once
// a second as a fast partner's do; the packet sockets heard nothing, as
// for a user without CAP_NET_RAW. The lab's TestLiveTickCost is the
// judge on a real bond; this keeps the host's tests honest about what the
// Sampler and the source's build allocate.
type builtLive struct {
	*Source
	clock *time.Time
	msgs  [][]byte
	stats []int // offsets of each message's IFLA_STATS64 payload
	n     uint64
	asked int // LACPDU requests
	// heard: the packet sockets hear the partner's LACPDUs, one a second
	// (as root with CAP_NET_RAW).
	heard bool
}

func newBuiltLive(tb testing.TB) *builtLive {
	now := time.Unix(1_000_000, 0)
	tree := lacpTree(tb, "synthetic-8023ad-6.8-4slaves-root.txt")
	tree["sys/class/net/bond0/bonding/slaves"] = proc_([]byte("e1 e2 e3 e4\n"))
	b := &builtLive{clock: &now}
	b.Source = fakeLive(tree, b.clock)
	// On disk, as procfs and sysfs are: the procfs file is kept open and
	// read with pread, as on a host (an fstest.MapFS file is opened anew
	// on each read).
	dir := tb.TempDir()
	for name, f := range tree {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	b.fsys = os.DirFS(dir)
	b.msgs = [][]byte{lacpBondMsg(true, 0)}
	for i, name := range []string{"e1", "e2", "e3", "e4"} {
		msg := lacpSlaveMsg(3+i, name, 1, 1)
		for _, a := range []*nl.RtAttr{nl.NewRtAttr(unix.IFLA_CARRIER_UP_COUNT, nl.Uint32Attr(1)), nl.NewRtAttr(unix.IFLA_CARRIER_DOWN_COUNT, nl.Uint32Attr(0))} {
			msg = append(msg, a.Serialize()...)
		}
		b.msgs = append(b.msgs, msg)
	}
	for _, msg := range b.msgs {
		off := -1
		for a := msg[unix.SizeofIfInfomsg:]; len(a) >= unix.SizeofRtAttr; {
			l := int(binary.NativeEndian.Uint16(a[0:2]))
			if binary.NativeEndian.Uint16(a[2:4]) == unix.IFLA_STATS64 {
				off = len(msg) - len(a) + unix.SizeofRtAttr
				break
			}
			a = a[min((l+3)&^3, len(a)):]
		}
		if off < 0 {
			tb.Fatal("a link message without IFLA_STATS64")
		}
		b.stats = append(b.stats, off)
	}
	return b
}

// Read implements collector.Source: the counters move, then the build.
func (b *builtLive) Read() (collector.Reading, error) {
	b.n++
	for i, off := range b.stats {
		// rx_bytes and tx_bytes, the third and fourth counters.
		binary.NativeEndian.PutUint64(b.msgs[i][off+16:], b.n*uint64(1000*(i+1)))
		binary.NativeEndian.PutUint64(b.msgs[i][off+24:], b.n*uint64(2000*(i+1)))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dumped(b.msgs...)
	var r collector.Reading
	err := b.build(&r, b.gen.Load(), b.now())
	return r, err
}

func (b *builtLive) LACPDUCounters(slaves []string, into map[string]bonding.LACPDUCounters) {
	b.asked++
	sec := uint64(b.clock.Unix())
	for _, s := range slaves {
		into[s] = bonding.LACPDUCounters{Rx: sec, Tx: sec}
	}
}

func (b *builtLive) Watch([]string) error { return nil }

// builtLiveSwitch is the name the switch's LLDP gives, as a decoded
// frame's that every copy shares.
var builtLiveSwitch = "leaf1"

func (b *builtLive) Neighbor(_ string, _ time.Time, into *neighbors.Neighbor) bool {
	if !b.heard {
		return false
	}
	*into = neighbors.Neighbor{Protocol: neighbors.ProtoLLDP, ChassisID: "02:00:00:00:00:01", SystemName: &builtLiveSwitch,
		PortID: "Ethernet1", TTLSeconds: 120, AgeSeconds: float64(b.clock.Sub(b.clock.Truncate(30*time.Second))) / 1e9}
	return true
}
func (b *builtLive) LACPDUAge(string, time.Time) (time.Duration, bool) {
	return b.clock.Sub(b.clock.Truncate(time.Second)), b.heard
}

func (b *builtLive) HeardLACPDU(_ string, into *neighbors.LACPDU) bool {
	if !b.heard {
		return false
	}
	*into = neighbors.LACPDU{Partner: neighbors.LACPPort{SystemMAC: "02:00:00:00:00:01", Key: 15, Port: 1}}
	return true
}
func (b *builtLive) Physical(string) (*model.Physical, bool) { return nil, false }

// liveTicker ticks a Sampler over a builtLive at 100 ms, the source's
// clock and the Sampler's moving together.
type liveTicker struct {
	tb   testing.TB
	src  *builtLive
	s    *collector.Sampler
	last *model.Snapshot // handed back at the next tick
}

func newLiveTicker(tb testing.TB, heard bool) *liveTicker {
	return newLiveTickerWith(tb, heard, nil)
}

// newLiveTickerWith is newLiveTicker with options of the test's (set).
func newLiveTickerWith(tb testing.TB, heard bool, set func(*collector.Options)) *liveTicker {
	src := newBuiltLive(tb)
	src.heard = heard
	lt := &liveTicker{tb: tb, src: src}
	opts := collector.Options{Interval: collector.MinInterval, History: collector.NoHistory, Clock: func() time.Time { return *src.clock }, Recycle: true}
	if set != nil {
		set(&opts)
	}
	lt.s = collector.NewSampler(src, opts)
	// Past the first configuration refresh after the one at start (every
	// liveConfigRefresh): the ticks after it have 9.9 s without one.
	for range int(liveConfigRefresh/collector.MinInterval) + 1 {
		lt.tick()
	}
	return lt
}

func (lt *liveTicker) tick() *model.Snapshot {
	*lt.src.clock = lt.src.clock.Add(collector.MinInterval)
	lt.s.Release(lt.last)
	snap, err := lt.s.Sample()
	if err != nil {
		lt.tb.Fatal(err)
	}
	lt.last = snap
	return snap
}

// TestLiveTicksDoNotGrow: thousands of steady live ticks at 100 ms (the
// build of a 4-slave 802.3ad bond from its messages, procfs unchanged,
// the LACPDU and carrier counters, rates, events), their snapshots handed
// back, hold no more memory than the first thousand: without root, with
// sockets that hear LACPDUs and LLDP. The LACPDU counters are asked for
// once a second.
func TestLiveTicksDoNotGrow(t *testing.T) {
	lt := newLiveTicker(t, false)
	asked := lt.src.asked
	for range 40 {
		lt.tick()
	}
	if n := lt.src.asked - asked; n < 4 || n > 5 {
		t.Errorf("40 ticks at 100 ms asked for the LACPDU counters %d times, want 4 or 5 (once a second)", n)
	}
	snap := lt.tick()
	sl := snap.Bonds[0].Slaves[0]
	if sl.SwitchSide == nil || sl.LACPDU == nil || sl.Carrier == nil || sl.Carrier.Up != 1 || sl.TxBps == nil {
		t.Fatalf("the tick lacks what it is counted with: %+v", sl)
	}
	collectortest.CheckNoGrowth(t, "live", func() { lt.tick() })

	lt = newLiveTicker(t, false)
	lt.src.capNetAdmin = false
	if snap := lt.tick(); !snap.Unprivileged || len(snap.Notes) == 0 {
		t.Fatalf("the tick without CAP_NET_ADMIN says nothing of it: %v", snap.Notes)
	}
	collectortest.CheckNoGrowth(t, "without CAP_NET_ADMIN", func() { lt.tick() })

	lt = newLiveTicker(t, true)
	if sl := lt.tick().Bonds[0].Slaves[0]; sl.LACPDU == nil || sl.LACPDU.PartnerView == nil || sl.LACPDU.LastRxAgeSeconds == nil ||
		sl.Neighbor == nil || sl.Neighbor.AgeSeconds == 0 {
		t.Fatalf("the tick lacks what the sockets heard: %+v, %+v", sl.LACPDU, sl.Neighbor)
	}
	collectortest.CheckNoGrowth(t, "sockets that hear LACPDUs and LLDP", func() { lt.tick() })
}

// BenchmarkLiveTick is a steady live tick: the Sampler over the live
// source's build, at 100 ms, its snapshots handed back. Its budget is no
// allocation.
func BenchmarkLiveTick(b *testing.B) {
	lt := newLiveTicker(b, false)
	steady := collectortest.SteadyAllocs(func() { lt.tick() })
	b.ReportAllocs()
	for b.Loop() {
		lt.tick()
	}
	collectortest.ReportBudget(b, steady, 0)
}

// slaveMeter is a flow meter on the builtLive's slaves (e1..e4, indexes 3
// to 6) whose every read counts the same two flows a little further.
type slaveMeter struct{ flows []flowmeter.Flow }

func (m *slaveMeter) Sync(map[int]string) error { return nil }
func (m *slaveMeter) Close() error              { return nil }
func (m *slaveMeter) Ifindex(name string) (int, error) {
	return 2 + int(name[1]-'0'), nil
}
func (m *slaveMeter) Read() (flowmeter.Reading, error) {
	for i := range m.flows {
		m.flows[i].Bytes += 100_000
		m.flows[i].Packets += 100
	}
	return flowmeter.Reading{Source: flowmeter.SourceEBPF, SampleRate: 1, Flows: slices.Clone(m.flows), MapEntries: 2, MapSize: 1024}, nil
}

// liveTickerWithFlows is the dashboard's tick on a live host: a flow
// table of its sockets (read every 3 s) and the flow meter read once a
// second; the ticks in between predict every slave's traffic from the
// table and carry the meter's last traffic.
func liveTickerWithFlows(tb testing.TB) *liveTicker {
	meter := &slaveMeter{}
	for i, slave := range []string{"e1", "e3"} {
		f := collectortest.UDPFlow("eth0", flowmeter.Tx, uint16(40000+i), 0)
		f.Slave, f.Ifindex = slave, 2+int(slave[1]-'0')
		meter.flows = append(meter.flows, f)
	}
	sockets := collectortest.ManySockets(20)
	lt := newLiveTickerWith(tb, true, func(o *collector.Options) {
		o.Flows, o.Meter, o.MeterEvery = &staticFlows{sockets: sockets}, meter, collector.DashboardMeterEvery
	})
	sl := lt.tick().Bonds[0]
	if sl.Flows == nil || sl.Measured == nil || sl.Slaves[0].Predicted == nil {
		tb.Fatalf("the tick lacks the flow table, the meter's traffic or the prediction: %+v", sl.Slaves[0])
	}
	return lt
}

// TestLiveTicksWithFlowsDoNotGrow: the dashboard's live tick with the
// flow table and the meter holds no more memory over thousands of ticks.
func TestLiveTicksWithFlowsDoNotGrow(t *testing.T) {
	lt := liveTickerWithFlows(t)
	collectortest.CheckNoGrowth(t, "flows and meter", func() { lt.tick() })
}

// BenchmarkLiveTickWithFlows is liveTickerWithFlows' tick. Its budget is
// no allocation on the ticks between two reads of the table or the
// meter (steady-allocs/tick, a median).
func BenchmarkLiveTickWithFlows(b *testing.B) {
	lt := liveTickerWithFlows(b)
	steady := collectortest.SteadyAllocs(func() { lt.tick() })
	b.ReportAllocs()
	for b.Loop() {
		lt.tick()
	}
	collectortest.ReportBudget(b, steady, 0)
}

// staticFlows is a FlowReader that returns the same sockets, their byte
// counts advancing.
type staticFlows struct {
	sockets []model.Socket
}

func (s *staticFlows) ReadFlows() (collector.FlowReading, error) {
	out := make([]model.Socket, len(s.sockets))
	for i := range s.sockets {
		s.sockets[i].TxBytes += uint64(1000 * (i%7 + 1))
		out[i] = s.sockets[i]
	}
	return collector.FlowReading{Sockets: out, Kernel: bonding.KernelVersion{Major: 6, Minor: 12}}, nil
}
