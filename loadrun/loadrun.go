// Package loadrun connects the dashboard's load panel to the engines that
// do the work: Live starts tests with package load over this host's
// network (placing streams by the bond's own hash) and prepares drills with
// package drill; Demo runs tests inside the demo's simulation. The screen
// (package ui) only follows a Run; cmd/bondtop picks the runner.
package loadrun

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/drill"
	"github.com/bondtop/bondtop/load"
	"github.com/bondtop/bondtop/model"
)

// Request is the load form, validated.
type Request struct {
	Config   load.Config
	Strategy load.Strategy
	// Slave is the slave of the OneSlave strategy.
	Slave string
}

// Test is a running test as the panel follows it; *load.Test is one.
type Test interface {
	Intervals() <-chan load.Interval
	Stop()
	Done() <-chan struct{}
	Result() (load.Summary, error)
}

// Run is a started test and what the panel says about it.
type Run struct {
	Test Test
	// Target is the address the traffic goes to; Bond the bond it
	// crosses ("" when the route takes another interface).
	Target netip.AddrPort
	Bond   string
	// Notes say what the placement could not do, in words.
	Notes []string
	// Predict names the slave of a stream whose port the kernel chose;
	// nil when no prediction can be made.
	Predict func(sport uint16) string
}

// Live runs tests with the load engine over this host's network.
type Live struct{}

// Start resolves the target, finds how the selected bond reaches it,
// plans the source ports, and starts the engine.
func (Live) Start(ctx context.Context, b *model.BondSample, req Request) (*Run, error) {
	cfg := req.Config
	dst, err := load.ResolveHost(ctx, cfg.Target)
	if err != nil {
		return nil, err
	}
	// Traffic goes to this address only: the engine gets it, not the name.
	cfg.Target = dst.String()
	run := &Run{Target: netip.AddrPortFrom(dst, portOr(cfg.Port))}
	if b != nil {
		route, err := load.RouteVia(diagnose.BondOf(b), dst, cfg.Protocol, cfg.Port)
		switch {
		case err == nil:
			run.Bond = b.Name
			if route.Placement != nil {
				run.Predict = route.Predict
			}
			if err := placeStreams(&cfg, req, route.Place, run); err != nil {
				return nil, err
			}
		case req.Strategy == load.OneSlave:
			return nil, fmt.Errorf("%v: a stream cannot be put on %s", err, req.Slave)
		case req.Strategy == load.Spread:
			run.Notes = append(run.Notes, fmt.Sprintf("%v: the streams are not placed (the kernel picks the ports)", err))
		}
	}
	t, err := load.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	run.Test = t
	return run, nil
}

// placeStreams fills cfg's ports for the strategy through place. Spread
// falls back to the kernel's ports with a note when the bond cannot
// spread by port (a layer2 policy, active-backup): the test then shows
// what the bond does with such streams, which is the point. One slave
// that cannot be had is an error: the admin asked for a single-link test.
func placeStreams(cfg *load.Config, req Request, place func(*load.Config, load.Strategy, string) error, run *Run) error {
	err := place(cfg, req.Strategy, req.Slave)
	switch {
	case err == nil:
		return nil
	case req.Strategy == load.OneSlave:
		return err
	}
	run.Notes = append(run.Notes, fmt.Sprintf("cannot spread: %v", err))
	return nil
}

func portOr(p uint16) uint16 {
	if p == 0 {
		return load.DefaultPort
	}
	return p
}

// Demo runs the panel's tests inside the demo's simulation: the
// streams are hashed onto the simulated slaves, and what the panel shows
// comes from the simulated counters.
type Demo struct{ Source *demo.Source }

// Start plans the ports with the simulated bond's own hash and adds the
// streams to the simulation.
func (dl Demo) Start(_ context.Context, b *model.BondSample, req Request) (*Run, error) {
	cfg := req.Config
	if b == nil {
		return nil, errors.New("no bond selected")
	}
	dst, err := netip.ParseAddr(cfg.Target)
	if err != nil {
		return nil, fmt.Errorf("the demo has no DNS: give an address, e.g. %s", demoPeer(b))
	}
	flow, err := dl.Source.LoadFlow(b.Name, dst)
	if err != nil {
		return nil, err
	}
	run := &Run{Target: netip.AddrPortFrom(dst, portOr(cfg.Port)), Bond: b.Name}
	k := bonding.KernelVersion{Major: 6, Minor: 12}
	if b.Flows != nil {
		k = b.Flows.Kernel
	}
	flow.DstPort = portOr(cfg.Port)
	flow.Proto = bonding.ProtoTCP
	if cfg.Protocol == load.UDP {
		flow.Proto = bonding.ProtoUDP
	}
	flow.L4Hash = true
	route := &load.Route{Bond: b.Name}
	pred, err := bonding.NewPredictor(diagnose.BondOf(b), k)
	if err == nil {
		route.Placement = &load.Placement{Predictor: pred, Flow: flow, Low: 32768, High: 60999}
		run.Predict = route.Predict
	}
	route.PlaceErr = err
	place := func(cfg *load.Config, s load.Strategy, slave string) error {
		src := cfg.Source
		err := route.Place(cfg, s, slave)
		cfg.Source = src // the simulation has no route: keep the form's
		return err
	}
	if err := placeStreams(&cfg, req, place, run); err != nil {
		return nil, err
	}
	streams := max(cfg.Streams, 1)
	ports := make([]uint16, streams)
	for i := range ports {
		switch {
		case i < len(cfg.SourcePorts) && len(cfg.SourcePorts[i]) > 0:
			ports[i] = cfg.SourcePorts[i][0]
		case cfg.FirstPort != 0:
			ports[i] = cfg.FirstPort + uint16(i)
		default:
			// The kernel's pick: somewhere in the ephemeral range.
			ports[i] = uint16(32768 + (int(time.Now().UnixNano()/1000)+i*7919)%28232)
		}
	}
	dur := cfg.Duration
	if dur == 0 {
		dur = load.DefaultDuration
	}
	if cfg.UntilStopped {
		dur = load.MaxDuration
	}
	// As fast as possible is a 10G stream: the simulated slaves cap it.
	rate := float64(cfg.Rate)
	if rate == 0 {
		rate = 10e9
		if cfg.Protocol == load.UDP {
			rate = 1e6
		}
	}
	spec := demo.LoadSpec{Bond: b.Name, Dst: dst, DstPort: portOr(cfg.Port), UDP: cfg.Protocol == load.UDP,
		SrcPorts: ports, Duration: dur}
	switch cfg.Direction {
	case load.Send:
		spec.TxBps, spec.RxBps = rate, rate/50 // the peer's ACKs
	case load.Receive:
		spec.TxBps, spec.RxBps = rate/50, rate
	default:
		spec.TxBps, spec.RxBps = rate, rate
	}
	l, err := dl.Source.StartLoad(spec)
	if err != nil {
		return nil, err
	}
	t := newDemoTest(l, ports, cfg, run.Predict)
	run.Test = t
	return run, nil
}

// demoPeer is an address the demo answers for on b's subnet.
func demoPeer(b *model.BondSample) string {
	if b.Flows != nil && len(b.Flows.Flows) > 0 {
		src := b.Flows.Flows[0].Local.Addr()
		if src.Is4() {
			a := src.As4()
			a[3] = 100
			return netip.AddrFrom4(a).String()
		}
	}
	return "10.20.0.100"
}

// demoTest turns a simulated load into the engine's intervals and summary.
type demoTest struct {
	l         *demo.Load
	intervals chan load.Interval
	done      chan struct{}
	stop      chan struct{}
	stopOnce  sync.Once
	summary   load.Summary
}

func newDemoTest(l *demo.Load, ports []uint16, cfg load.Config, predict func(uint16) string) *demoTest {
	t := &demoTest{l: l, intervals: make(chan load.Interval, 16), done: make(chan struct{}), stop: make(chan struct{})}
	every := cfg.Interval
	if every == 0 {
		every = load.DefaultInterval
	}
	info := make([]load.StreamInfo, len(ports))
	for i, p := range ports {
		// iperf3's stream ids: 1, 3, 4, ... (2 is never used).
		info[i] = load.StreamInfo{ID: i + 1, Sender: cfg.Direction != load.Receive, SourcePort: p}
		if i > 0 {
			info[i].ID++
		}
		if i < len(cfg.PredictedSlaves) {
			info[i].PredictedSlave = cfg.PredictedSlaves[i]
		} else if predict != nil {
			info[i].PredictedSlave = predict(p)
		}
	}
	go t.run(info, every, cfg)
	return t
}

// run publishes an interval whenever the simulation has moved on, at the
// test's interval, until the streams leave the simulation.
func (t *demoTest) run(info []load.StreamInfo, every time.Duration, cfg load.Config) {
	defer close(t.done)
	defer close(t.intervals)
	tick := time.NewTicker(every / 4)
	defer tick.Stop()
	last, begin := t.l.Bytes()
	lastAt := begin
	first := last
	stopped := false
	publish := func(cur []demo.StreamBytes, at time.Duration) {
		iv := load.Interval{Start: lastAt - begin, End: at - begin}
		secs := max((at - lastAt).Seconds(), 1e-9)
		for i := range info {
			n := cur[i].Sent - last[i].Sent
			if !info[i].Sender {
				n = cur[i].Received - last[i].Received
			}
			st := load.StreamStats{StreamInfo: info[i], Bytes: n, BitsPerSecond: float64(n) * 8 / secs, Retransmits: -1}
			if cfg.Protocol == load.TCP && info[i].Sender {
				st.Retransmits = 0 // a simulated link loses nothing
			}
			iv.Streams = append(iv.Streams, st)
			sum := &iv.Sent
			if !info[i].Sender {
				sum = &iv.Received
			}
			sum.Bytes += n
		}
		iv.Sent.BitsPerSecond = float64(iv.Sent.Bytes) * 8 / secs
		iv.Received.BitsPerSecond = float64(iv.Received.Bytes) * 8 / secs
		select {
		case t.intervals <- iv:
		default: // the reader lags: drop, as the engine does
		}
		last, lastAt = cur, at
	}
loop:
	for {
		select {
		case <-tick.C:
			if cur, at := t.l.Bytes(); at-lastAt >= every {
				publish(cur, at)
			}
		case <-t.stop:
			stopped = true
			t.l.Stop()
			<-t.l.Done()
			break loop
		case <-t.l.Done():
			break loop
		}
	}
	final, at := t.l.Bytes()
	if at > lastAt {
		publish(final, at)
	}
	sum := load.Summary{Protocol: cfg.Protocol, Direction: cfg.Direction, Duration: at - begin, Stopped: stopped}
	secs := max(sum.Duration.Seconds(), 1e-9)
	for i := range info {
		n := final[i].Sent - first[i].Sent
		if !info[i].Sender {
			n = final[i].Received - first[i].Received
		}
		ss := load.StreamSummary{StreamInfo: info[i], SentBytes: n, ReceivedBytes: n, BitsPerSecond: float64(n) * 8 / secs, Retransmits: -1}
		if cfg.Protocol == load.TCP && info[i].Sender {
			ss.Retransmits = 0
		}
		sum.Streams = append(sum.Streams, ss)
		agg := &sum.Sent
		if !info[i].Sender {
			agg = &sum.Received
		}
		agg.SentBytes += n
		agg.ReceivedBytes += n
		agg.BitsPerSecond += ss.BitsPerSecond
	}
	t.summary = sum
}

func (t *demoTest) Intervals() <-chan load.Interval { return t.intervals }
func (t *demoTest) Stop()                           { t.stopOnce.Do(func() { close(t.stop) }) }
func (t *demoTest) Done() <-chan struct{}           { return t.done }

// Result is final once Done is closed (run writes the summary first).
func (t *demoTest) Result() (load.Summary, error) {
	select {
	case <-t.done:
		return t.summary, nil
	default:
		return load.Summary{}, nil
	}
}

// PreparedDrill is a planned drill: what it will do, and doing it.
// *drill.Drill is one.
type PreparedDrill interface {
	Describe() string
	Run(ctx context.Context, progress func(string)) (*drill.Result, error)
}

// PrepareDrill plans a drill on the live host (drill.Prepare). The demo
// and --root trees cannot drill: Demo has no PrepareDrill.
func (Live) PrepareDrill(ctx context.Context, o drill.Options) (PreparedDrill, error) {
	d, err := drill.Prepare(ctx, o)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// ProposeTarget names the simulated peer of b, for the load form.
func (Demo) ProposeTarget(b *model.BondSample) string { return demoPeer(b) }
