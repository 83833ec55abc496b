//go:build linux

package guest

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/load"
)

// The load engine's placement (issue 6) against the real bonding driver:
// bondtop's own server (load.Server, what `bondtop serve` runs) in the
// peer namespace, bondtop's own client (load.Start, what `bondtop load`
// runs) in the root namespace, the source ports chosen by load.Placement
// as --spread and --slave choose them, and each slave's share read from
// the kernel's tx_bytes, not from bondtop's collector.

// loadSeconds is each test's length: long enough that the control
// connection's few kilobytes and a stray ARP weigh nothing, short enough
// for the lab's ten minutes.
const loadSeconds = 3

// spreadTolerance is how far from even (1/n) a slave's share may be with
// --spread: ±10 percentage points, the looser reading of the issue's
// "within ±10% of even" (0.40-0.60 over 2 slaves, 0.15-0.35 over 4).
const spreadTolerance = 0.10

// spreadRate paces each stream of the spread runs (load.Config.Rate), so
// a slave's share is the share of the streams placed on it, which is what
// the placement decides. Unpaced, the shares were TCP's fairness between
// streams racing on an emulated CPU: up to 11 points off even with 8
// streams over 4 slaves, each carrying exactly 2, when 6.12's
// single-threaded TCG shared the host with other VMs. 20 Mbit/s a stream
// (160 Mbit/s for 8) stays below what the lab delivered at its slowest
// (about 270 Mbit/s). What the placement decides is also checked exactly
// in runLoad: each slave carries the bytes of the streams predicted on
// it, within 2 points.
const spreadRate = 20_000_000

// TestLoadPlacement: balance-xor with layer3+4 over 2 and 4 slaves. With
// 4 and 8 streams placed by Placement.Spread every slave's share of the
// test's tx bytes must be within spreadTolerance of even (streams paced at
// spreadRate); random ephemeral
// ports are logged beside them for contrast (they are chance, not
// asserted); Placement.OnSlave must put at least 99% on the named slave.
func TestLoadPlacement(t *testing.T) {
	k, _, err := bonding.RunningKernel(os.DirFS("/"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("slaves=%d", n), func(t *testing.T) {
			p := NewPair(t, 90+i, n)
			spec := BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer3+4"}
			p.Root.Bond(t, p.Bond, spec, p.Slaves...)
			p.Peer.Bond(t, "pbond0", spec, p.Far...)
			p.Root.Addr(t, p.Bond, p.LocalCIDR())
			p.Peer.Addr(t, "pbond0", p.RemoteCIDR())
			startLoadServer(t, p)
			pl := newPlacement(t, p, k)

			for _, streams := range []int{4, 8} {
				ports, slaves, err := pl.Spread(streams)
				if err != nil {
					t.Fatalf("Spread(%d): %v", streams, err)
				}
				shares, sum := runLoad(t, p, pl, streams, spreadRate, ports, slaves)
				worst := 0.0
				for j, s := range shares {
					worst = max(worst, math.Abs(s-1/float64(n)))
					if math.Abs(s-1/float64(n)) > spreadTolerance {
						t.Errorf("spread, %d streams: %s carried %.3f of the tx bytes, want %.3f ±%.2f", streams, p.Slaves[j], s, 1/float64(n), spreadTolerance)
					}
				}
				t.Logf("spread, %d streams over %d slaves: shares %s (worst %.1f points off even, %.1f%% of 1/n), %s", streams, n, formatShares(p.Slaves, shares), 100*worst, 100*worst*float64(n), sum)
				Measure(t, fmt.Sprintf("load_spread_worst[slaves=%d,streams=%d]", n, streams), 100*worst, "pp")
			}

			// The kernel's ephemeral ports: what `iperf3 -P 4` gets.
			shares, sum := runLoad(t, p, pl, 4, spreadRate, nil, nil)
			worst := 0.0
			for _, s := range shares {
				worst = max(worst, math.Abs(s-1/float64(n)))
			}
			t.Logf("random ports (contrast, not asserted), 4 streams over %d slaves: shares %s (worst %.1f points off even, %.1f%% of 1/n), %s", n, formatShares(p.Slaves, shares), 100*worst, 100*worst*float64(n), sum)

			// One link: the last slave, so the choice is never the
			// first slave by accident.
			target := p.Slaves[n-1]
			ports, slaves, err := pl.OnSlave(4, target)
			if err != nil {
				t.Fatalf("OnSlave(4, %s): %v", target, err)
			}
			shares, sum = runLoad(t, p, pl, 4, 0, ports, slaves)
			t.Logf("--slave %s, 4 streams: shares %s, %s", target, formatShares(p.Slaves, shares), sum)
			if s := shares[n-1]; s < 0.99 {
				t.Errorf("--slave %s: it carried %.4f of the tx bytes, want >= 0.99", target, s)
			}
			Measure(t, fmt.Sprintf("load_onslave_share[slaves=%d]", n), 100*shares[n-1], "%")
		})
	}
}

// startLoadServer runs bondtop's iperf3 server on the peer's address,
// port 5201, until the end of the test.
func startLoadServer(t *testing.T, p *Pair) {
	t.Helper()
	var ln net.Listener
	err := p.Peer.Do(func() error {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(p.Remote.String(), "5201"))
		return err
	})
	if err != nil {
		t.Fatalf("bondtop serve on %s: %v", p.Remote, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := &load.Server{MaxDuration: time.Minute}
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("bondtop serve: %v", err)
		}
	})
}

// newPlacement builds the Placement `bondtop load --spread` builds: the
// bond as the live source reads it, and the streams' flow (the bond's
// address and MAC, the peer's, TCP to port 5201).
func newPlacement(t *testing.T, p *Pair, k bonding.KernelVersion) *load.Placement {
	t.Helper()
	b := bondWhenUsable(t, p.Bond, len(p.Slaves))
	pred, err := bonding.NewPredictor(b, k)
	if err != nil {
		t.Fatal(err)
	}
	f := bonding.Flow{Proto: bonding.ProtoTCP, DstPort: 5201, L4Hash: true,
		Src: netip.MustParseAddr(p.Local.String()), Dst: netip.MustParseAddr(p.Remote.String())}
	copy(f.SrcMAC[:], p.Root.Link(t, p.Bond).Attrs().HardwareAddr)
	copy(f.DstMAC[:], p.Peer.Link(t, "pbond0").Attrs().HardwareAddr)
	return &load.Placement{Predictor: pred, Flow: f, Low: 32768, High: 60999}
}

// runLoad runs one test of loadSeconds, each stream paced at rate bit/s
// (0: unpaced), with the given planned ports (nil: the kernel's) and
// returns each slave's share of the tx bytes the kernel
// counted over it, and a summary line. It checks that every stream took a
// planned port and reports the slave the plan named.
func runLoad(t *testing.T, p *Pair, pl *load.Placement, streams int, rate uint64, ports [][]uint16, slaves []string) ([]float64, string) {
	t.Helper()
	Settle(t, p.Slaves...)
	c0 := Counters(t, "tx_bytes", p.Slaves...)
	cfg := load.Config{
		Target: p.Remote.String(), Port: 5201, Protocol: load.TCP, Streams: streams, Rate: rate,
		Duration: loadSeconds * time.Second, Source: netip.MustParseAddr(p.Local.String()),
		SourcePorts: ports, PredictedSlaves: slaves,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	test, err := load.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("load.Start: %v", err)
	}
	for range test.Intervals() {
	}
	sum, err := test.Wait()
	if err != nil {
		t.Fatalf("load test (%d streams): %v", streams, err)
	}
	Settle(t, p.Slaves...)
	c1 := Counters(t, "tx_bytes", p.Slaves...)
	var total uint64
	for i := range c1 {
		total += c1[i] - c0[i]
	}
	shares := make([]float64, len(c1))
	for i := range c1 {
		shares[i] = float64(c1[i]-c0[i]) / float64(max(total, 1))
	}
	if len(sum.Streams) != streams {
		t.Fatalf("%d streams in the result, want %d", len(sum.Streams), streams)
	}
	// Where each stream should be, by its actual port: the plan's slave
	// when placed (and the port one of the plan's), else the prediction.
	per := map[string]int{}
	perBytes := map[string]uint64{}
	var written uint64
	for i, s := range sum.Streams {
		want, err := pl.Predict(s.SourcePort)
		if err != nil {
			t.Errorf("stream %d (port %d): %v", s.ID, s.SourcePort, err)
		}
		per[want]++
		perBytes[want] += s.SentBytes
		written += s.SentBytes
		if ports == nil {
			continue
		}
		if s.PredictedSlave != slaves[i] || want != slaves[i] {
			t.Errorf("stream %d: port %d, predicted %q by the engine and %q by the hash, planned %q", s.ID, s.SourcePort, s.PredictedSlave, want, slaves[i])
		}
		if !slices.Contains(ports[i], s.SourcePort) {
			t.Errorf("stream %d: port %d is none of the planned %v", s.ID, s.SourcePort, ports[i])
		}
	}
	// The placement itself, whatever TCP's fairness between the streams
	// made of it: each slave's share of the kernel's bytes is the share of
	// the bytes its predicted streams wrote (headers add alike to all).
	var perSlave []string
	for i, s := range p.Slaves {
		perSlave = append(perSlave, fmt.Sprintf("%s=%d", s, per[s]))
		want := float64(perBytes[s]) / float64(max(written, 1))
		if math.Abs(shares[i]-want) > 0.02 {
			t.Errorf("%s carried %.3f of the kernel's tx bytes, but the streams predicted on it wrote %.3f of the test's bytes", s, shares[i], want)
		}
	}
	line := fmt.Sprintf("%d bytes on the wire, %.0f Mbit/s delivered, streams per slave by the hash %s",
		total, sum.Sent.BitsPerSecond/1e6, strings.Join(perSlave, " "))
	if rate > 0 {
		line += fmt.Sprintf(", paced at %d Mbit/s a stream", rate/1e6)
	}
	return shares, line
}

// formatShares lists shares as "dut0 0.512 dut1 0.488".
func formatShares(names []string, shares []float64) string {
	var b strings.Builder
	for i, s := range shares {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s %.3f", names[i], s)
	}
	return b.String()
}
