//go:build linux

package guest

import (
	"fmt"
	"math"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/model"
)

// flowShareTolerance is how far (absolute) a slave's share of the flow
// table's predicted tx may be from its share of the kernel's tx_bytes over
// the same socket dumps. The streams are paused and drained around each
// dump under layer3+4 (quietSample), so both count the same bytes:
// payload (tcpi_bytes_sent) and frames differ only by the headers, alike
// on every slave. Measured: at most 0.03 points, on a busy host too.
const flowShareTolerance = 0.005

// TestFlowTable: the flow table (live.Flows through the Sampler,
// as bondtop wires it) while TCP streams with known source ports cross a
// balance-xor bond. Under layer3+4 every stream must be in the table with
// the slave the hash gives it, and each slave's predicted tx share must
// match the kernel's measured share; under layer2 with one peer every
// stream sits on one slave, and the analyzer must say so (imbalance-tx,
// hash-policy-one-peer).
func TestFlowTable(t *testing.T) {
	k, _, err := bonding.RunningKernel(os.DirFS("/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("layer3+4", func(t *testing.T) {
		const streams, firstPort = 8, 44000
		p := flowPair(t, 95, 3, "layer3+4")
		bt, br := newFlowBondtop(t, p)
		pred := livePredictor(t, p, k)
		bt.Sample(t)

		tr := StartTCP(t, p.Peer, p.Local, p.Remote, streams, firstPort)
		time.Sleep(time.Second)                   // past slow start
		_, start := quietSample(t, bt, br, p, tr) // a socket dump: the start of the rates' interval
		for w := range 2 {
			time.Sleep(2 * time.Second)
			b, end := quietSample(t, bt, br, p, tr)
			tab := checkFlowTable(t, p, b, pred, streams, firstPort)
			worst := compareShares(t, fmt.Sprintf("window %d", w+1), p, b, tab, start, end)
			Measure(t, fmt.Sprintf("flow_share_error[layer3+4,window=%d]", w+1), 100*worst, "pp")
			logFindings(t, b)
			for _, f := range b.Findings {
				if f.ID == diagnose.IDHashPolicy {
					t.Errorf("finding %s under layer3+4 (ports are hashed): %s", f.ID, f.Message)
				}
			}
			start = end
		}
	})
	t.Run("layer2", func(t *testing.T) {
		const streams, firstPort = 4, 44100
		p := flowPair(t, 96, 2, "layer2")
		bt, br := newFlowBondtop(t, p)
		pred := livePredictor(t, p, k)
		bt.Sample(t)

		StartTCP(t, p.Peer, p.Local, p.Remote, streams, firstPort)
		time.Sleep(time.Second)
		_, end := sampleAt(t, bt, br, p)
		var b *model.BondSample
		var start dumpCounters
		// Samples every half second, so the analyzer's window has rates
		// to judge the imbalance by; the shares are compared over the
		// last one, the flow table's.
		for range 6 {
			time.Sleep(500 * time.Millisecond)
			start = end
			b, end = sampleAt(t, bt, br, p)
		}
		tab := checkFlowTable(t, p, b, pred, streams, firstPort)
		worst := compareShares(t, "last sample", p, b, tab, start, end)
		Measure(t, "flow_share_error[layer2]", 100*worst, "pp")
		// One peer, one MAC pair: one slave for every stream.
		on := map[string]bool{}
		for _, f := range tab.Flows {
			on[f.Choice.Slave] = true
		}
		if len(on) != 1 {
			t.Errorf("layer2, one peer: the flow table puts the streams on %d slaves (%v), want 1", len(on), on)
		}
		logFindings(t, b)
		var ids []string
		for _, f := range b.Findings {
			ids = append(ids, f.ID)
		}
		for _, want := range []string{diagnose.IDHashPolicy, diagnose.IDImbalanceTx} {
			if !slices.Contains(ids, want) {
				t.Errorf("layer2 with one peer: no finding %s (findings: %v)", want, ids)
			}
		}
	})
}

// flowPair is a balance-xor bond over n slaves with policy, its partner a
// balance-xor bond in the peer namespace, addresses on both.
func flowPair(t *testing.T, subnet, n int, policy string) *Pair {
	t.Helper()
	p := NewPair(t, subnet, n)
	spec := BondSpec{Mode: "balance-xor", XmitHashPolicy: policy}
	p.Root.Bond(t, p.Bond, spec, p.Slaves...)
	p.Peer.Bond(t, "pbond0", spec, p.Far...)
	p.Root.Addr(t, p.Bond, p.LocalCIDR())
	p.Peer.Addr(t, "pbond0", p.RemoteCIDR())
	return p
}

// newFlowBondtop is bondtop's collector with the flow table and the
// analyzer, as cmd/bondtop wires them (live.NewFlows beside the
// live source, diagnose's window as Analyze). The socket dump is due on
// every sample here (FlowInterval 100 ms), so the test chooses the
// interval the flows' rates cover.
func newFlowBondtop(t *testing.T, p *Pair) (*Bondtop, *dumpBracket) {
	t.Helper()
	src, err := live.New()
	if err != nil {
		t.Fatalf("live.New: %v", err)
	}
	t.Cleanup(func() { src.Close() })
	lf, err := live.NewFlows()
	if err != nil {
		t.Fatalf("live.NewFlows: %v", err)
	}
	t.Cleanup(func() { lf.Close() })
	br := &dumpBracket{FlowReader: lf, t: t, slaves: p.Slaves}
	opts := collector.Options{Interval: time.Second, Bonds: []string{p.Bond}, History: time.Minute,
		Flows: br, FlowInterval: 100 * time.Millisecond, Analyze: diagnose.NewWindow(0).Fill}
	return &Bondtop{Src: src, Sampler: collector.NewSampler(src, opts)}, br
}

// dumpBracket is the flow table's reader as bondtop wires it (live.Flows)
// with the slaves' tx_bytes read just before and just after each socket
// dump, so the kernel's counts at the dump lie between two readings a
// dump apart, not a whole sample apart: on a busy single-CPU guest the
// rest of a sample can take long enough for the streams' mix to change.
type dumpBracket struct {
	collector.FlowReader
	t      testing.TB
	slaves []string
	dumps  int
	last   dumpCounters
}

func (d *dumpBracket) ReadFlows() (collector.FlowReading, error) {
	before := Counters(d.t, "tx_bytes", d.slaves...)
	r, err := d.FlowReader.ReadFlows()
	d.last = dumpCounters{before, Counters(d.t, "tx_bytes", d.slaves...)}
	d.dumps++
	return r, err
}

// livePredictor is bonding's predictor for the bond as the live source
// reads it: the test's own answer to "which slave", to hold the flow
// table's against.
func livePredictor(t *testing.T, p *Pair, k bonding.KernelVersion) *bonding.Predictor {
	t.Helper()
	b := bondWhenUsable(t, p.Bond, len(p.Slaves))
	pred, err := bonding.NewPredictor(b, k)
	if err != nil {
		t.Fatal(err)
	}
	return pred
}

// checkFlowTable checks that each of the streams (source ports firstPort,
// firstPort+1, ...) is in b's flow table, once, established, with a rate,
// predicted on the slave pred gives for its packets, and that the table
// holds nothing else and nothing unpredictable.
func checkFlowTable(t *testing.T, p *Pair, b *model.BondSample, pred *bonding.Predictor, streams, firstPort int) *model.FlowTable {
	t.Helper()
	tab := b.Flows
	if tab == nil {
		t.Fatalf("%s has no flow table", b.Name)
	}
	if tab.Err != "" || tab.Unpredictable > 0 || tab.Dropped > 0 {
		t.Errorf("flow table: err %q, %d unpredictable (%s), %d dropped", tab.Err, tab.Unpredictable, tab.Reason, tab.Dropped)
	}
	if !tab.HaveRates() {
		t.Fatalf("flow table without rates (%.2f s since the previous dump)", tab.Seconds)
	}
	local, remote := netip.MustParseAddr(p.Local.String()), netip.MustParseAddr(p.Remote.String())
	bondMAC := p.Root.Link(t, p.Bond).Attrs().HardwareAddr
	peerMAC := p.Peer.Link(t, "pbond0").Attrs().HardwareAddr
	found := 0
	for i := range streams {
		port := uint16(firstPort + i)
		var match []*model.Flow
		for j := range tab.Flows {
			f := &tab.Flows[j]
			if f.Proto == bonding.ProtoTCP && f.Local == netip.AddrPortFrom(local, port) && f.Remote == netip.AddrPortFrom(remote, 5201) {
				match = append(match, f)
			}
		}
		if len(match) != 1 {
			t.Errorf("stream from port %d: %d entries in the flow table, want 1", port, len(match))
			continue
		}
		found++
		f := match[0]
		pk := bonding.Flow{Src: local, Dst: remote, Proto: bonding.ProtoTCP, SrcPort: port, DstPort: 5201, L4Hash: true}
		copy(pk.SrcMAC[:], bondMAC)
		copy(pk.DstMAC[:], peerMAC)
		want, err := pred.Predict(&pk)
		if err != nil {
			t.Fatal(err)
		}
		if f.State != "established" || !f.HaveRate || f.TxBps <= 0 || !f.Path.HaveDstMAC {
			t.Errorf("stream from port %d: state %s, rate %v %.0f bit/s, next hop MAC known %v", port, f.State, f.HaveRate, f.TxBps, f.Path.HaveDstMAC)
		}
		if f.Choice.Outcome != bonding.Hashed || f.Choice.Slave != want.Slave {
			t.Errorf("stream from port %d: flow table says %s %s (%s), the hash of its packets %s", port, f.Choice.Outcome, f.Choice.Slave, f.Choice.Reason, want.Slave)
		}
	}
	if len(tab.Flows) != streams {
		t.Errorf("flow table of %s: %d flows, want the %d streams only", b.Name, len(tab.Flows), streams)
	}
	t.Logf("flow table: %d of %d streams found, %d flows, %d unpredictable, over %.2f s", found, streams, len(tab.Flows), tab.Unpredictable, tab.Seconds)
	return tab
}

// compareShares holds each slave's share of the flow table's predicted tx
// rate against its share of the kernel's tx_bytes between the two dumps the
// rates span (start and end, each read on both sides of its dump), logs
// both with bondtop's own measured share, and returns the worst distance
// of a prediction from the kernel's range.
func compareShares(t *testing.T, what string, p *Pair, b *model.BondSample, tab *model.FlowTable, start, end dumpCounters) float64 {
	t.Helper()
	var predTotal float64
	for _, s := range p.Slaves {
		sf := tab.Slave(s)
		if sf == nil {
			t.Fatalf("flow table has no row for %s", s)
		}
		predTotal += sf.TxBps
	}
	// The kernel's share of each slave over the four pairings of the
	// readings around the two dumps. With the streams steady for the
	// moment a dump takes, a share moves monotonically between readings,
	// so its value at the dumps lies within these.
	lo := make([]float64, len(p.Slaves))
	hi := make([]float64, len(p.Slaves))
	for i := range lo {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
	}
	for _, c0 := range [][]uint64{start.before, start.after} {
		for _, c1 := range [][]uint64{end.before, end.after} {
			var total uint64
			for i := range p.Slaves {
				total += c1[i] - c0[i]
			}
			if predTotal <= 0 || total == 0 {
				t.Fatalf("%s: predicted %.0f bit/s, kernel %d bytes: nothing to compare", what, predTotal, total)
			}
			for i := range p.Slaves {
				share := float64(c1[i]-c0[i]) / float64(total)
				lo[i], hi[i] = min(lo[i], share), max(hi[i], share)
			}
		}
	}
	worst := 0.0
	var rows []string
	for i, s := range p.Slaves {
		sf := tab.Slave(s)
		pred := sf.TxBps / predTotal
		d := max(lo[i]-pred, pred-hi[i], 0) // how far outside the kernel's range
		worst = max(worst, d)
		meas := fmt.Sprintf("%.3f", lo[i])
		if hi[i]-lo[i] >= 0.0005 {
			meas += fmt.Sprintf("..%.3f", hi[i])
		}
		rows = append(rows, fmt.Sprintf("%s %d flows predicted %.3f kernel %s bondtop %s", s, sf.Flows, pred, meas, share(SlaveIn(t, b, s).ShareTx)))
		if d > flowShareTolerance {
			t.Errorf("%s, %s: predicted tx share %.3f (%d flows, %.1f Mbit/s), kernel's %s: more than %.1f points apart",
				what, s, pred, sf.Flows, sf.TxBps/1e6, meas, 100*flowShareTolerance)
		}
	}
	t.Logf("%s: tx shares: %s; predicted %.1f Mbit/s payload over %.2f s (worst difference %.1f points)",
		what, strings.Join(rows, ", "), predTotal/1e6, tab.Seconds, 100*worst)
	return worst
}

// dumpCounters are the slaves' tx_bytes read just before and just after
// one socket dump of the flow table.
type dumpCounters struct{ before, after []uint64 }

// sampleAt takes one bondtop sample, which must dump the sockets, and
// returns the slaves' tx_bytes read around that dump.
func sampleAt(t *testing.T, bt *Bondtop, br *dumpBracket, p *Pair) (*model.BondSample, dumpCounters) {
	t.Helper()
	n := br.dumps
	b := BondIn(t, bt.Sample(t), p.Bond)
	if br.dumps != n+1 {
		t.Fatalf("a sample read the sockets %d times, want once", br.dumps-n)
	}
	return b, br.last
}

// quietSample is sampleAt with the streams paused and drained around the
// dump: every byte a socket counts has then reached the slaves' counters
// and nothing moves while they are read, so the kernel's count at the
// dump is exact rather than bracketed (a busy single-CPU guest made the
// bracket several points wide).
func quietSample(t *testing.T, bt *Bondtop, br *dumpBracket, p *Pair, tr *Traffic) (*model.BondSample, dumpCounters) {
	t.Helper()
	tr.Pause(t)
	defer tr.Resume()
	return sampleAt(t, bt, br, p)
}

func logFindings(t *testing.T, b *model.BondSample) {
	t.Helper()
	if len(b.Findings) == 0 {
		t.Logf("findings: none")
	}
	for _, f := range b.Findings {
		t.Logf("finding %s (%s) %v: %s", f.ID, f.Severity, f.Slaves, f.Message)
	}
}

// bondWhenUsable reads bond through bondtop's live source once want of its
// slaves can transmit. Right after enslaving, a slave whose link is not yet
// up is left out of the kernel's hash, and a predictor built then answers
// for fewer slaves than the traffic will see.
func bondWhenUsable(t *testing.T, bond string, want int) *bonding.Bond {
	t.Helper()
	src, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, err := src.Read()
		if err != nil {
			t.Fatal(err)
		}
		b := r.Bond(bond)
		if b == nil {
			t.Fatalf("bondtop does not see %s", bond)
		}
		usable, excluded := bonding.UsableSlaves(b)
		if len(usable) == want {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 15 s only %v of %s can transmit (%v)", usable, bond, excluded)
		}
	}
}
