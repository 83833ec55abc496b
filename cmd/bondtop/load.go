package main

// `bondtop load`: an iperf3 test from this host, headless. The engine is
// load/; this file turns flags into a load.Config, plans the source ports
// through the bond's transmit hash, and prints intervals and the result.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/internal/printable"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/load"
)

const loadUsage = `bondtop load - an iperf3 test to HOST, its streams placed on the bond's slaves

Usage:
  bondtop load HOST[:PORT] [flags]

HOST runs iperf3 -s or bondtop serve (port 5201 unless given). Traffic goes
to HOST only; the test always ends (after -t, on ^C, or after an hour).

Flags:
  -P N             parallel streams (default 1, at most 128)
  -t SEC           duration in seconds (default 10; 0 = until ^C, at most 1h)
  -R               reverse: the server sends, this host receives
  --bidir          both directions at once
  -u, --udp        UDP instead of TCP (default rate 1M per stream)
  -b RATE          per-stream rate in bit/s: 100M, 2.5G (default: unlimited TCP)
  -l BYTES         write size (TCP default 1048576) or datagram size (UDP)
  -i SEC           seconds between interval reports (default 1)
  --spread         choose source ports so the streams spread evenly over
                   the bond's usable slaves (its transmit hash)
  --slave NAME     choose source ports so every stream leaves by NAME
  --cport N        source ports N, N+1, ... (as iperf3 --cport)
  --bond BOND      the bond the route uses (found from the route if not given)
  --json           one JSON document at the end instead of text
`

type loadOptions struct {
	cfg    load.Config
	spread bool
	slave  string
	bond   string
	json   bool
}

func parseLoadArgs(args []string) (loadOptions, error) {
	var o loadOptions
	fs := flag.NewFlagSet("bondtop load", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	streams := fs.Int("P", 1, "")
	secs := fs.Float64("t", 10, "")
	reverse := fs.Bool("R", false, "")
	bidir := fs.Bool("bidir", false, "")
	udp := fs.Bool("udp", false, "")
	fs.BoolVar(udp, "u", false, "")
	rate := fs.String("b", "", "")
	length := fs.Int("l", 0, "")
	interval := fs.Float64("i", 1, "")
	cport := fs.Int("cport", 0, "")
	fs.BoolVar(&o.spread, "spread", false, "")
	fs.StringVar(&o.slave, "slave", "", "")
	fs.StringVar(&o.bond, "bond", "", "")
	fs.BoolVar(&o.json, "json", false, "")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return o, err
	}
	if len(positional) != 1 {
		return o, errors.New("load: give one server: bondtop load HOST[:PORT]")
	}
	host, port, err := load.ParseTarget(positional[0])
	if err != nil {
		return o, fmt.Errorf("load: %w", err)
	}
	c := &o.cfg
	c.Target, c.Port, c.Streams, c.BlockSize = host, port, *streams, *length
	switch {
	case *secs == 0:
		c.UntilStopped = true
	case *secs < 1 || *secs > load.MaxDuration.Seconds():
		return o, fmt.Errorf("load: -t %g: give 1 to %d seconds, or 0 for until ^C", *secs, int(load.MaxDuration.Seconds()))
	default:
		c.Duration = time.Duration(*secs * float64(time.Second))
	}
	c.Interval = time.Duration(*interval * float64(time.Second))
	switch {
	case *reverse && *bidir:
		return o, errors.New("load: -R and --bidir exclude each other")
	case *reverse:
		c.Direction = load.Receive
	case *bidir:
		c.Direction = load.Bidirectional
	}
	if *udp {
		c.Protocol = load.UDP
	}
	if *rate != "" {
		if c.Rate, err = load.ParseRate(*rate); err != nil {
			return o, fmt.Errorf("load: -b: %w", err)
		}
	}
	n := 0
	for _, on := range []bool{o.spread, o.slave != "", *cport != 0} {
		if on {
			n++
		}
	}
	if n > 1 {
		return o, errors.New("load: --spread, --slave and --cport exclude each other")
	}
	if *cport < 0 || *cport > 65535 {
		return o, fmt.Errorf("load: --cport %d: a port is 1 to 65535", *cport)
	}
	c.FirstPort = uint16(*cport)
	if err := c.Validate(); err != nil {
		return o, fmt.Errorf("load: %w", err)
	}
	return o, nil
}

// runLoad is `bondtop load ARGS`; it returns the exit code.
func runLoad(args []string, stdout, stderr io.Writer) int {
	o, err := parseLoadArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, loadUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: %v\nRun 'bondtop load -h' for usage.\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return fail(stderr, loadTest(ctx, o, stdout, stderr))
}

func loadTest(ctx context.Context, o loadOptions, stdout, stderr io.Writer) error {
	dst, err := load.ResolveHost(ctx, o.cfg.Target)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	// Traffic goes to this address only: the engine gets it, not the name.
	o.cfg.Target = dst.String()
	bp, err := findBondPath(o, dst)
	if err != nil {
		return err
	}
	if bp != nil {
		if err := bp.plan(&o, stderr); err != nil {
			return err
		}
	}
	var before map[string][2]uint64
	if bp != nil {
		before = bp.counters()
	}
	t, err := load.Start(ctx, o.cfg)
	if err != nil {
		return err
	}
	for iv := range t.Intervals() {
		if !o.json {
			printInterval(stdout, &iv, bp)
		}
	}
	sum, err := t.Wait()
	if err != nil {
		return err
	}
	var slaves []slaveDelta
	if bp != nil {
		slaves = bp.deltas(before, bp.counters())
	}
	if o.json {
		return writeLoadJSON(stdout, &sum, slaves, bp)
	}
	printSummary(stdout, &sum, slaves, bp)
	return nil
}

// bondPath is the bond a test's traffic leaves by, and how.
type bondPath struct {
	src   *live.Source
	bond  string
	route *load.Route
}

// findBondPath finds the bond the route to dst uses: --bond, else the
// bond whose route lookup succeeds. No bond involved is not an error
// unless placement or --bond asked for one.
func findBondPath(o loadOptions, dst netip.Addr) (*bondPath, error) {
	needed := o.bond != "" || o.spread || o.slave != ""
	src, err := live.New()
	if err != nil {
		if needed {
			return nil, err
		}
		return nil, nil
	}
	r, err := src.Read()
	if err != nil {
		src.Close()
		if needed {
			return nil, err
		}
		return nil, nil
	}
	names := make([]string, 0, len(r.Bonds))
	for _, b := range r.Bonds {
		names = append(names, b.Name)
	}
	var route *load.Route
	if o.bond != "" {
		bond := r.Bond(o.bond)
		if bond == nil {
			src.Close()
			return nil, &collector.NotFoundError{Name: o.bond, Bonds: names}
		}
		if route, err = load.RouteVia(bond, dst, o.cfg.Protocol, o.cfg.Port); err != nil {
			src.Close()
			return nil, err
		}
	} else {
		for i := range r.Bonds {
			if rt, err := load.RouteVia(&r.Bonds[i], dst, o.cfg.Protocol, o.cfg.Port); err == nil {
				route = rt
				break
			}
		}
	}
	if route == nil {
		src.Close()
		if needed {
			return nil, fmt.Errorf("the route to %s does not go through a bond (bonds here: %s): placing streams needs one", dst, joinOrNone(names))
		}
		return nil, nil
	}
	return &bondPath{src: src, bond: route.Bond, route: route}, nil
}

// plan fills the config's source address, and its source ports for
// --spread and --slave.
func (bp *bondPath) plan(o *loadOptions, stderr io.Writer) error {
	strategy := load.KernelPorts
	switch {
	case o.spread:
		strategy = load.Spread
	case o.slave != "":
		strategy = load.OneSlave
	}
	if strategy != load.KernelPorts && o.cfg.Direction == load.Receive {
		fmt.Fprintln(stderr, "bondtop: load: note: with -R the server sends; the ports place only this host's ACKs, and the switch's hash places the data")
	}
	return bp.route.Place(&o.cfg, strategy, o.slave)
}

// predicted is the slave a stream is predicted on: planned, else from
// the port the kernel gave it.
func (bp *bondPath) predicted(info load.StreamInfo) string {
	if info.PredictedSlave != "" || bp == nil || !info.Sender {
		return info.PredictedSlave
	}
	return bp.route.Predict(info.SourcePort)
}

// counters reads the bond's slaves' byte counters (tx, rx).
func (bp *bondPath) counters() map[string][2]uint64 {
	r, err := bp.src.Read()
	if err != nil {
		return nil
	}
	b := r.Bond(bp.bond)
	if b == nil {
		return nil
	}
	return load.SlaveBytes(b)
}

type slaveDelta = load.SlaveDelta

// deltas are what each slave moved during the test.
func (bp *bondPath) deltas(before, after map[string][2]uint64) []slaveDelta {
	defer bp.src.Close()
	r, err := bp.src.Read()
	if err != nil {
		return nil
	}
	b := r.Bond(bp.bond)
	if b == nil {
		return nil
	}
	return load.SlaveDeltas(b, before, after)
}

func printInterval(w io.Writer, iv *load.Interval, bp *bondPath) {
	for _, s := range iv.Streams {
		line := fmt.Sprintf("[%3d] %6.2f-%-6.2f s  %s  %10s  %12s", s.ID, iv.Start.Seconds(), iv.End.Seconds(), role(s.Sender), formatBytes(s.Bytes), units.Bits(s.BitsPerSecond))
		if s.Retransmits >= 0 {
			line += fmt.Sprintf("  retr %d", s.Retransmits)
		}
		if s.RTT > 0 {
			line += fmt.Sprintf("  rtt %s", s.RTT.Round(time.Microsecond))
		}
		if !s.Sender && s.Packets > 0 {
			line += fmt.Sprintf("  lost %d/%d  jitter %s", s.Lost, s.Packets, s.Jitter.Round(time.Microsecond))
		}
		if sl := bp.predicted(s.StreamInfo); sl != "" {
			line += "  slave " + printable.String(sl)
		}
		fmt.Fprintln(w, line)
	}
	if len(iv.Streams) > 1 {
		for _, sum := range []*load.StreamStats{&iv.Sent, &iv.Received} {
			if sum.Bytes > 0 {
				fmt.Fprintf(w, "[SUM] %6.2f-%-6.2f s  %s  %10s  %12s\n", iv.Start.Seconds(), iv.End.Seconds(), role(sum == &iv.Sent), formatBytes(sum.Bytes), units.Bits(sum.BitsPerSecond))
			}
		}
	}
}

func role(sender bool) string {
	if sender {
		return "TX"
	}
	return "RX"
}

func printSummary(w io.Writer, sum *load.Summary, slaves []slaveDelta, bp *bondPath) {
	fmt.Fprintf(w, "- - - %s %s, %.2f s%s - - -\n", sum.Protocol, sum.Direction, sum.Duration.Seconds(), map[bool]string{true: " (stopped)"}[sum.Stopped])
	for _, s := range sum.Streams {
		line := fmt.Sprintf("[%3d] sport %-5d %s  sent %10s  received %10s  %12s", s.ID, s.SourcePort, role(s.Sender), formatBytes(s.SentBytes), formatBytes(s.ReceivedBytes), units.Bits(s.BitsPerSecond))
		if s.Retransmits >= 0 {
			line += fmt.Sprintf("  retr %d", s.Retransmits)
		}
		if s.Packets > 0 {
			line += fmt.Sprintf("  lost %d/%d  jitter %s", s.Lost, s.Packets, s.Jitter.Round(time.Microsecond))
		}
		if sl := bp.predicted(s.StreamInfo); sl != "" {
			line += "  slave " + printable.String(sl)
		}
		fmt.Fprintln(w, line)
	}
	for _, t := range []*load.StreamSummary{&sum.Sent, &sum.Received} {
		if t.ReceivedBytes > 0 || t.SentBytes > 0 {
			fmt.Fprintf(w, "[SUM] %s  sent %10s  received %10s  %12s\n", role(t == &sum.Sent), formatBytes(t.SentBytes), formatBytes(t.ReceivedBytes), units.Bits(t.BitsPerSecond))
		}
	}
	if len(slaves) > 0 {
		var parts []string
		for _, s := range slaves {
			parts = append(parts, fmt.Sprintf("%s tx %s rx %s", s.Name, formatBytes(s.TxBytes), formatBytes(s.RxBytes)))
		}
		fmt.Fprintf(w, "%s during the test: %s\n", printable.String(bp.bond), printable.String(strings.Join(parts, ", ")))
	}
}

// loadJSON is --json's document; its keys are an interface.
type loadJSON struct {
	Streams []streamJSON `json:"streams"`
	Sum     sumJSON      `json:"sum"`
	Slaves  []slaveDelta `json:"slaves"`
}

type streamJSON struct {
	ID             int     `json:"id"`
	Sport          uint16  `json:"sport"`
	PredictedSlave *string `json:"predicted_slave"`
	Bytes          uint64  `json:"bytes"`
	BitsPerSecond  float64 `json:"bits_per_second"`
	Retransmits    *int64  `json:"retransmits"`
}

type sumJSON struct {
	Bytes         uint64  `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   *int64  `json:"retransmits"`
}

// writeLoadJSON prints the result: per stream the bytes that arrived at
// the receiver and their rate, and the sender's retransmits (null when
// unknown: UDP, or a peer that does not say); predicted_slave is null
// when no bond is involved or the hash cannot say.
func writeLoadJSON(w io.Writer, sum *load.Summary, slaves []slaveDelta, bp *bondPath) error {
	doc := loadJSON{Streams: []streamJSON{}, Slaves: slaves}
	if doc.Slaves == nil {
		doc.Slaves = []slaveDelta{}
	}
	var retr int64 = -1
	for _, s := range sum.Streams {
		sj := streamJSON{ID: s.ID, Sport: s.SourcePort, Bytes: s.ReceivedBytes, BitsPerSecond: s.BitsPerSecond}
		if sl := bp.predicted(s.StreamInfo); sl != "" {
			sj.PredictedSlave = &sl
		}
		if s.Retransmits >= 0 {
			sj.Retransmits = new(s.Retransmits)
			retr = max(retr, 0) + s.Retransmits
		}
		doc.Streams = append(doc.Streams, sj)
		doc.Sum.Bytes += s.ReceivedBytes
	}
	doc.Sum.BitsPerSecond = float64(doc.Sum.Bytes) * 8 / max(sum.Duration.Seconds(), 1e-9)
	if retr >= 0 {
		doc.Sum.Retransmits = &retr
	}
	enc := json.NewEncoder(printable.NewJSONWriter(w))
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func formatBytes(b uint64) string {
	f := float64(b)
	switch {
	case f >= 1<<30:
		return fmt.Sprintf("%.2f GiB", f/(1<<30))
	case f >= 1<<20:
		return fmt.Sprintf("%.2f MiB", f/(1<<20))
	case f >= 1<<10:
		return fmt.Sprintf("%.2f KiB", f/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
