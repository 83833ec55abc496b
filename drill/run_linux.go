package drill

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/load"
)

// Timing of a drill.
const (
	// baseline is how long each phase's stream runs before the action,
	// so a gap is measured against a flowing stream.
	baseline = 500 * time.Millisecond
	// tail is how long a phase watches after the bond settled.
	tail = time.Second
	// pollEvery is how often a phase reads the bond to see it settle
	// when netlink says nothing (LACP port states change silently), and
	// restore looks for the slave's link.
	pollEvery = 50 * time.Millisecond
	// datagram is the measuring streams' datagram size (UDP payload).
	datagram = 64
)

// errPhaseOver ends a phase's watch at its limit.
var errPhaseOver = errors.New("phase over")

// Prepare reads the bond, resolves the peer and decides the plan. It
// changes nothing (it may send one datagram to the peer so the kernel
// learns its MAC), so --plan and the dashboard's confirmation use it.
func Prepare(ctx context.Context, o Options) (*Drill, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := leftBehind(o); err != nil {
		return nil, err
	}
	host, port, err := load.ParseTarget(o.Peer)
	if err != nil {
		return nil, fmt.Errorf("--peer: %w", err)
	}
	if port == 0 {
		port = load.DefaultPort
	}
	dst, err := load.ResolveHost(ctx, host)
	if err != nil {
		return nil, err
	}
	src, err := live.New()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	b, err := readBond(src, o.Bond)
	if err != nil {
		return nil, err
	}
	route, err := load.RouteVia(b, dst, load.UDP, port)
	if err != nil {
		return nil, fmt.Errorf("the drill measures through %s, but the route to %s does not take it: %w", o.Bond, dst, err)
	}
	settings, err := readSettings(o.Bond)
	if err != nil {
		return nil, err
	}
	if b.PeerNotifyMs != nil {
		settings.PeerNotifMs = *b.PeerNotifyMs
	}
	var traffic map[string]uint64
	if o.Slave == "" {
		traffic = busiestLook(src, b)
	}
	p, err := MakePlan(b, settings, o, traffic)
	if err != nil {
		return nil, err
	}
	p.bond = b
	return &Drill{Plan: p, Peer: netip.AddrPortFrom(dst, port), opts: o, src: route.Path.Src, route: route}, nil
}

// leftBehind refuses a drill while an earlier one's changes are not
// undone.
func leftBehind(o Options) error {
	st, err := ReadState(o.StateDir, o.Bond)
	if err != nil || st == nil {
		return err
	}
	return fmt.Errorf("a drill (pid %d, %s) left %s changed: run bondtop drill %s --restore first: %w",
		st.PID, st.Started.Format(time.RFC3339), st.Slave, o.Bond, ErrRefused)
}

func readBond(src *live.Source, name string) (*bonding.Bond, error) {
	r, err := src.Read()
	if err != nil {
		return nil, err
	}
	b := r.Bond(name)
	if b == nil {
		names := make([]string, 0, len(r.Bonds))
		for _, b := range r.Bonds {
			names = append(names, b.Name)
		}
		return nil, &collector.NotFoundError{Name: name, Bonds: names}
	}
	return b, nil
}

// busiestLook counts each slave's bytes over a short look.
func busiestLook(src *live.Source, b *bonding.Bond) map[string]uint64 {
	before := load.SlaveBytes(b)
	time.Sleep(300 * time.Millisecond)
	now, err := readBond(src, b.Name)
	if err != nil {
		return nil
	}
	out := map[string]uint64{}
	for _, d := range load.SlaveDeltas(now, before, load.SlaveBytes(now)) {
		out[d.Name] = d.TxBytes + d.RxBytes
	}
	return out
}

// run is one drill in progress.
type run struct {
	d        *Drill
	p        *Plan
	slaves   []string
	watch    *eventWatch
	capture  *capture
	progress func(string)
	res      *Result
	// usableBefore are the bond's usable slaves before the drill.
	usableBefore []string
	// kept is the measuring stream the failover phase leaves running for
	// the failback phase (--direction rx), nil otherwise.
	kept *measuring
}

// quiet reports whether the drill keeps this host silent from the
// failover to the end of the failback: --direction rx, where the only
// stream comes from the peer. Then one test spans both phases, with no
// keep-alive on its control connection, so its results are exchanged
// only after the failback (docs/drill.md).
func (r *run) quiet() bool { return r.d.opts.Direction == RX }

// Run carries the drill out: the failover phase, the hold, the failback
// phase, then the bond put back as it was. progress (may be nil) hears
// each step as it starts. Whatever happens (an error, ctx cancelled, a
// panic) the slave's admin state and the active slave are restored
// before Run returns; the Result says whether that worked. On a
// cancelled context the Result so far comes back with the error.
func (d *Drill) Run(ctx context.Context, progress func(string)) (res *Result, err error) {
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	if progress == nil {
		progress = func(string) {}
	}
	o, p := d.opts, d.Plan
	if err := leftBehind(o); err != nil {
		return nil, err
	}
	wasUp, err := adminUp(p.Slave)
	if err != nil {
		return nil, err
	}
	r := &run{d: d, p: p, progress: progress, res: &Result{Bond: p.Bond, Mode: p.Mode, Slave: p.Slave, How: p.How,
		Peer: d.Peer.String(), Estimate: o.Direction != RX, Direction: o.Direction, Rate: o.Rate, HoldMs: o.Hold.Milliseconds()}}
	for i := range p.bond.Slaves {
		r.slaves = append(r.slaves, p.bond.Slaves[i].Name)
	}
	b, err := quickBond(p.Bond, r.slaves)
	if err != nil {
		return nil, err
	}
	r.usableBefore, _ = bonding.UsableSlaves(b)
	if r.watch, err = watchBond(p.Bond); err != nil {
		return nil, err
	}
	defer r.watch.close()
	if r.capture, err = startCapture(r.slaves, r.quiet()); err != nil {
		return nil, err
	}
	defer r.capture.close()

	st := &State{Bond: p.Bond, Slave: p.Slave, How: p.How, SlaveWasUp: wasUp, PID: os.Getpid(), Started: time.Now()}
	if p.ActiveSlaveMode() {
		st.ActiveBefore = p.ActiveBefore
	}
	if err := writeState(o.StateDir, st); err != nil {
		return nil, fmt.Errorf("%w: nothing was changed", err)
	}
	// From here on every way out restores.
	defer func() {
		if pv := recover(); pv != nil {
			r.restore(st)
			r.dropKept()
			panic(pv)
		}
		if rerr := r.restore(st); rerr != nil {
			err = errors.Join(err, rerr)
		}
		r.dropKept()
		r.res.Findings = findings(p, r.res)
		if err != nil && ctx.Err() != nil {
			r.res.Interrupted = "interrupted: the drill stopped early"
		}
		res = r.res
	}()
	if err := r.failover(ctx); err != nil {
		return r.res, err
	}
	return r.res, r.failback(ctx)
}

// dropKept ends a stream a failed phase left running.
func (r *run) dropKept() {
	if r.kept != nil {
		r.kept.stop()
		r.kept = nil
	}
}

// moveActive makes slave the bond's active slave; when only netlink could
// do it, the result says what that sent.
func (r *run) moveActive(slave string) error {
	quiet, err := setActiveSlave(r.p.Bond, slave)
	if err == nil && !quiet && !slices.Contains(r.res.Notes, netlinkMoveNote) {
		r.res.Notes = append(r.res.Notes, netlinkMoveNote)
	}
	return err
}

const netlinkMoveNote = "active_slave was moved by netlink (sysfs was not writable): on that the kernel resends the bond's MLD reports, which teach a switch the new port; a bond that fails over by itself sends none"

func (r *run) failover(ctx context.Context) error {
	p := r.p
	var act func() error
	var action string
	switch p.How {
	case Active:
		action = "active -> " + p.NewActive
		act = func() error { return r.moveActive(p.NewActive) }
	default:
		action = p.Slave + " down"
		act = func() error { return setAdminUp(p.Slave, false) }
	}
	r.progress(fmt.Sprintf("failover: %s, hold %v", action, p.Hold))
	settled := func(b *bonding.Bond) bool {
		usable, _ := bonding.UsableSlaves(b)
		if b.Is8023AD() {
			want := slices.DeleteFunc(slices.Clone(r.usableBefore), func(s string) bool { return s == p.Slave })
			return slices.Equal(usable, want)
		}
		return !slices.Contains(usable, p.Slave) && len(usable) > 0
	}
	return r.phase(ctx, "failover", action, act, func(context.Context, time.Time) bool { return false }, settled, p.Hold)
}

func (r *run) failback(ctx context.Context) error {
	p := r.p
	s := p.Settings
	var act func() error
	var action string
	// The active slave the bond should end up with on its own.
	wantActive := ""
	switch p.How {
	case Active:
		action = "active -> " + p.Slave
		act = func() error { return r.moveActive(p.Slave) }
		wantActive = p.Slave
	default:
		action = p.Slave + " up"
		act = func() error { return setAdminUp(p.Slave, true) }
		if p.ActiveSlaveMode() && s.Primary == p.Slave && s.PrimaryReselect != "failure" {
			wantActive = p.Slave
		}
	}
	r.progress("failback: " + action)
	settled := func(b *bonding.Bond) bool {
		sl := b.Slave(p.Slave)
		if sl == nil || deref(sl.MIIStatus) != "up" {
			return false
		}
		if wantActive != "" && deref(b.ActiveSlave) != wantActive {
			return false
		}
		if b.Is8023AD() {
			usable, _ := bonding.UsableSlaves(b)
			return slices.Equal(usable, r.usableBefore)
		}
		return true
	}
	// The longest the bond may take: updelay, a few MII polls, and for
	// 802.3ad the LACP exchange (a slow partner answers within 30 s).
	limit := time.Duration(max(s.UpDelayMs, 0)+3*max(s.MIIMonMs, 100))*time.Millisecond + 5*time.Second
	if p.Mode == bonding.Mode8023AD {
		limit += 30 * time.Second
	}
	var settledAt time.Time
	done := func(_ context.Context, at time.Time) bool {
		if settledAt.IsZero() {
			settledAt = at
		}
		return time.Since(settledAt) >= tail
	}
	return r.phase(ctx, "failback", action, act, done, settled, limit)
}

// busyWait and busyRetry: how long and how often a phase asks a busy
// peer again before it gives up.
const (
	busyWait  = 5 * time.Second
	busyRetry = 200 * time.Millisecond
)

// awaitFlowing waits until t's stream flows: the first datagram back, or
// the data phase for a send-only stream. On failure it stops t and says
// why, wrapping the test's own error (load.ErrBusy for a busy peer).
func (r *run) awaitFlowing(ctx context.Context, name string, t *load.Test, meter *gapMeter) error {
	stop := func() error {
		t.Stop()
		_, err := t.Wait()
		return err
	}
	ready := time.NewTimer(10 * time.Second)
	defer ready.Stop()
	if r.d.opts.Direction != TX {
		select {
		case <-meter.started:
		case <-t.Done():
		case <-ready.C:
		case <-ctx.Done():
		}
		if meter.count() == 0 {
			return fmt.Errorf("%s: no datagram from %s within 10 s: is it running bondtop serve or iperf3 -s? (%w)", name, r.d.Peer, stop())
		}
		return nil
	}
	for t.Phase() != load.Running {
		select {
		case <-t.Done():
			return fmt.Errorf("%s: measuring stream to %s: %w", name, r.d.Peer, stop())
		case <-ready.C:
			return fmt.Errorf("%s: the measuring stream to %s did not start within 10 s (%w)", name, r.d.Peer, stop())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// measuring is a running measuring stream: the load test, the meter of
// the phase its received datagrams count for, and when its own datagrams
// left.
type measuring struct {
	t     *load.Test
	meter *gapMeter
	sends *sendLog
}

func (m *measuring) stop() (load.Summary, error) {
	m.t.Stop()
	return m.t.Wait()
}

// startMeasuring starts a phase's measuring stream, waits until it flows
// and lets it run its baseline.
func (r *run) startMeasuring(ctx context.Context, name string) (*measuring, error) {
	o := r.d.opts
	m := &measuring{meter: newGapMeter(), sends: &sendLog{}}
	meter := m.meter
	cfg := load.Config{
		Target: r.d.Peer.Addr().String(), Port: r.d.Peer.Port(), Protocol: load.UDP, UntilStopped: true,
		Rate: uint64(o.Rate) * datagram * 8, BlockSize: datagram, Source: r.d.src, Interval: time.Second,
		OnDatagram: meter.datagram, OnSend: m.sends.sent,
	}
	// In a bond that hashes by port, the stream this host sends leaves by
	// the slave under test (planned before the drill, while it was up).
	if r.d.route != nil && r.d.route.Placement != nil {
		planned := cfg
		if err := r.d.route.Place(&planned, load.OneSlave, r.p.Slave); err == nil && len(planned.SourcePorts) > 0 && len(planned.SourcePorts[0]) > 0 {
			cfg = planned
			r.res.StreamSlave = r.p.Slave
		}
	}
	switch o.Direction {
	case RX:
		cfg.Direction = load.Receive
		// A keep-alive probe would leave this host mid-hold (Go's
		// default comes after 15 s idle) and teach the switch.
		cfg.ControlKeepAlive = -1
	case TX:
		cfg.Direction = load.Send
	default:
		cfg.Direction = load.Bidirectional
	}
	// The peer may still be closing the previous phase's test (an iperf3
	// server runs one at a time, and answers ACCESS_DENIED meanwhile):
	// a busy peer is asked again for a few seconds.
	busyUntil := time.Now().Add(busyWait)
	for {
		t, err := load.Start(ctx, cfg)
		if err != nil {
			err = fmt.Errorf("%s: measuring stream to %s: %w", name, r.d.Peer, err)
		} else {
			go func(t *load.Test) {
				for range t.Intervals() {
				}
			}(t)
			if err = r.awaitFlowing(ctx, name, t, meter); err == nil {
				m.t = t
				break
			}
		}
		if errors.Is(err, load.ErrBusy) && time.Now().Before(busyUntil) && sleep(ctx, busyRetry) {
			continue
		}
		return nil, err
	}
	if !sleep(ctx, baseline) {
		m.stop()
		return nil, ctx.Err()
	}
	return m, nil
}

// phase runs one action under a measuring stream: baseline, the action,
// then until done says so (given the time the bond settled) or limit
// passed; settled says when the bond reached its expected state. In a
// quiet drill the failover phase leaves its stream running for the
// failback phase, which takes it over at its action.
func (r *run) phase(ctx context.Context, name, action string, act func() error, done func(context.Context, time.Time) bool,
	settled func(*bonding.Bond) bool, limit time.Duration) error {
	o := r.d.opts
	m := r.kept
	r.kept = nil
	if m == nil {
		var err error
		if m, err = r.startMeasuring(ctx, name); err != nil {
			return err
		}
	}
	keep := r.quiet() && name == "failover"
	ph := Phase{Name: name, Action: action}
	t0 := time.Now()
	if err := act(); err != nil {
		m.stop()
		return fmt.Errorf("%s: %w", name, err)
	}
	ph.ActionTime = t0
	// The bond is read when netlink says it changed (and now and then,
	// for what netlink does not announce, as LACP port states): reading
	// it on a timer would take the rtnl lock the bond's own monitor
	// needs, and slow the very failover being measured.
	var settledAt time.Time
	every := 5 * pollEvery
	if r.p.Mode == bonding.Mode8023AD {
		every = pollEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	expiry := time.NewTimer(limit)
	defer expiry.Stop()
	var cerr error
	check := true
	for cerr == nil {
		if check && settledAt.IsZero() {
			if b, err := quickBond(r.p.Bond, r.slaves); err == nil && settled(b) {
				settledAt = time.Now()
			}
		}
		if !settledAt.IsZero() && done(ctx, settledAt) {
			break
		}
		check = false
		select {
		case <-ctx.Done():
			cerr = ctx.Err()
		case <-m.t.Done():
			cerr = errors.New("the measuring stream ended early (the peer went away?)")
		case <-expiry.C:
			cerr = errPhaseOver
		case <-r.watch.changed:
			check = true
		case <-tick.C:
			check = true
		}
	}
	if cerr == errPhaseOver {
		cerr = nil
	}
	end := time.Now()
	if keep && cerr == nil {
		// The stream runs on into the failback: what arrives from now on
		// is the next phase's.
		var rx gapReading
		rx, m.meter = m.meter.handOver(end, o.Rate)
		r.kept = m
		r.fill(&ph, rx, m.sends, &load.Summary{}, t0, end, settledAt)
		r.res.Phases = append(r.res.Phases, ph)
		return nil
	}
	rx := m.meter.read(end, o.Rate)
	sum, serr := m.stop()
	r.fill(&ph, rx, m.sends, &sum, t0, end, settledAt)
	r.res.Phases = append(r.res.Phases, ph)
	if cerr != nil {
		return fmt.Errorf("%s: %w", name, cerr)
	}
	if serr != nil && !errors.Is(serr, context.Canceled) {
		return fmt.Errorf("%s: measuring stream: %w", name, serr)
	}
	return nil
}

// fill puts one phase's measurements into ph.
func (r *run) fill(ph *Phase, rx gapReading, sends *sendLog, sum *load.Summary, t0, end, settledAt time.Time) {
	o := r.d.opts
	if o.Direction != TX {
		ph.GapRxMs = ptr(float64(rx.Longest.Microseconds()) / 1000)
		ph.GapRxOpen = rx.Open
		ph.LostRx = ptr(rx.Lost)
		ph.Reordered = ptr(rx.Reordered)
	}
	// The outage on the way out starts with the action when the slave
	// goes away, and with the bond's move (or first reaction) when it
	// comes back.
	outage := t0
	for _, e := range r.watch.between(t0, end) {
		if ph.EventMs == nil {
			ph.EventMs = msSince(t0, e.at)
			if ph.Name == "failback" {
				outage = e.at
			}
		}
		if e.active != "" && ph.ActiveMs == nil {
			ph.ActiveMs = msSince(t0, e.at)
			if ph.Name == "failback" {
				outage = e.at
			}
		}
	}
	if o.Direction != RX {
		lost := uint64(max(sum.Sent.Lost, 0))
		ph.LostTx = ptr(lost)
		ph.GapTxMs = ptr(float64(sends.gap(lost, outage, t0.Add(-baseline/2), end).Microseconds()) / 1000)
	}
	if a, err := activeSlave(r.p.Bond); err == nil {
		ph.ActiveSlave = a
	}
	ph.GARP.Expected = r.p.Settings.NumPeerNotif
	if r.quiet() {
		ph.HostFrames = ptr(0)
	}
	for _, n := range r.capture.between(t0, end) {
		switch n.kind {
		case unsolicitedNA:
			ph.GARP.UnsolNA++
		case gratuitousARP:
			ph.GARP.Count++
		case membershipReport:
			ph.GARP.Reports++
		default:
			// Only a quiet drill counts the rest (its capture sees
			// every frame that leaves; the others' see ARP and ICMPv6).
			if ph.HostFrames == nil {
				continue
			}
			*ph.HostFrames++
			if !slices.Contains(ph.HostFrameKinds, n.what) && len(ph.HostFrameKinds) < 8 {
				ph.HostFrameKinds = append(ph.HostFrameKinds, n.what)
			}
			continue
		}
		if ph.GARP.FirstMs == nil {
			ph.GARP.FirstMs = msSince(t0, n.at)
		}
		if !slices.Contains(ph.GARP.Slaves, n.slave) {
			ph.GARP.Slaves = append(ph.GARP.Slaves, n.slave)
		}
	}
	if ph.GARP.Slaves == nil {
		ph.GARP.Slaves = []string{}
	}
	if r.p.Mode == bonding.Mode8023AD && !settledAt.IsZero() {
		ph.LACPSettleMs = msSince(t0, settledAt)
	}
}

// restore puts back what the state file says the drill changed, then
// removes the file; res.Restored says whether the bond is as before.
func (r *run) restore(st *State) error {
	r.progress("restoring " + st.Slave)
	err := restoreState(st, r.p.Settings)
	r.res.Restored = err == nil
	if err == nil {
		err = removeState(r.d.opts.StateDir, st.Bond)
	}
	return err
}

// restoreState sets the slave's admin state and the bond's active slave
// back to st's, waiting for the slave's link to come up (updelay) before
// it can be made active again.
func restoreState(st *State, s Settings) error {
	up, err := adminUp(st.Slave)
	if err != nil {
		return err
	}
	if up != st.SlaveWasUp {
		if err := setAdminUp(st.Slave, st.SlaveWasUp); err != nil {
			return err
		}
	}
	if st.ActiveBefore == "" {
		return nil
	}
	if a, err := activeSlave(st.Bond); err == nil && a == st.ActiveBefore {
		return nil
	}
	wait := time.Duration(max(s.UpDelayMs, 0)+3*max(s.MIIMonMs, 100))*time.Millisecond + 3*time.Second
	deadline := time.Now().Add(wait)
	for !slaveMIIUp(st.ActiveBefore) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s's link did not come up within %v: cannot make it the active slave of %s again", st.ActiveBefore, wait, st.Bond)
		}
		time.Sleep(pollEvery)
	}
	if a, err := activeSlave(st.Bond); err == nil && a == st.ActiveBefore {
		return nil // the kernel failed back meanwhile
	}
	if _, err := setActiveSlave(st.Bond, st.ActiveBefore); err != nil {
		return err
	}
	if a, err := activeSlave(st.Bond); err != nil || a != st.ActiveBefore {
		return fmt.Errorf("%s's active slave is %s, not %s as before: %v", st.Bond, orNone(a), st.ActiveBefore, err)
	}
	return nil
}

// Restore undoes what a drill killed mid-way left on bond (its state
// file in dir): the slave's admin state and the active slave. It returns
// the state it restored, nil when there was nothing to do.
func Restore(dir, bond string) (*State, error) {
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	st, err := ReadState(dir, bond)
	if err != nil || st == nil {
		return nil, err
	}
	s, err := readSettings(bond)
	if err != nil {
		return st, err
	}
	if err := restoreState(st, s); err != nil {
		return st, err
	}
	return st, removeState(dir, bond)
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
