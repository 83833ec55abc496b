// Command bondtop is top for Linux bonding: what each slave of a bond
// carries, how the bond and its LACP partner see each other, and why
// traffic is or is not spread over the slaves.
//
// This file is wiring only: flags, subcommands, exit codes. The work is in
// the collector, bonding and ui packages.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/internal/printable"
	"github.com/bondtop/bondtop/model"
)

// version is set by the build (-ldflags "-X main.version=v1.2.3"); without
// it, the module version or VCS revision from the build info is used.
var version = ""

// Exit codes: 1 for trouble at run time, 2 for a usage error or a bond
// that does not exist (the user asked for something that is not there).
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

const usageText = `bondtop - top for Linux bonding

Usage:
  bondtop [flags] [BOND...]          watch bonds (every bond when none named)
  bondtop list [flags]               the bonds of this host, their mode and slaves
  bondtop hash BOND ADDR:PORT        which slave a flow from this host takes, and why
  bondtop hash --policy P --slaves A,B,... --src-mac MAC <flows
                                     the same for flows on standard input (planning)
  bondtop load HOST[:PORT] [flags]   an iperf3 test to HOST, streams placed on slaves
                                     (bondtop load -h for its flags)
  bondtop serve [--listen ADDR:PORT] an iperf3 server for iperf3 -c (default :5201,
                                     every address: see --allow in bondtop serve -h)
  bondtop drill BOND --peer HOST     a failover drill: what taking a slave away costs
                                     (bondtop drill -h for its flags)
  bondtop completion bash|zsh|fish   a shell completion script (subcommands, flags,
                                     this host's bonds and slaves)

Modes:
  --once                 two samples one interval apart, then exit
  --count N              N samples, one per interval, then exit
  --json                 with --once: one JSON document; with --count: JSON lines

Flags:
  --demo                 a simulated host with two bonds (no root, no bond needed)
  --listen ADDR:PORT     serve Prometheus metrics on http://ADDR:PORT/metrics,
                         beside the dashboard or any other mode (":9843" is
                         every address of this host; 127.0.0.1:9843 or
                         10.0.0.5:9843 only that one)
  --headless             with --listen: no screen, only metrics, until stopped
  --web.listen-address ADDR:PORT  the same as --listen (node_exporter's name)
  --web.systemd-socket   serve metrics on the socket systemd passes (socket
                         activation) instead of --listen
  --web.config.file FILE with --listen: TLS and basic auth for the metrics,
                         in the Prometheus exporters' web config format
                         (docs/web-config.md)
  --record FILE          append every snapshot to FILE (gzip JSON lines), in
                         any mode
  --replay FILE          play a recording back (dashboard; --once, --count N
                         and --json print the recorded snapshots as written)
  --speed N              replay N times faster (default 1)
  --root DIR             read DIR/proc and DIR/sys (a copy of another host's
                         /proc/net/bonding and /sys/class/net) instead of this host
  --interval DURATION    time between samples, Go syntax: 200ms, 1s, 2s
                         (default 1s, at least 100ms)
  --top N                flows per bond in --json and --record, busiest
                         first (default 50)
  --flow-map-size N      flows the in-kernel meter keeps apart (default
                         65536); beyond, bytes count per slave as "other"
  --meter-budget N       packets per second per CPU the in-kernel meter
                         counts one by one (default 250000, about 2 % of
                         a core); above it 1 in N, scaled, flows marked
                         sampled; 0 counts every packet
  --no-ebpf              measure flows by sampling (AF_PACKET, 1 in 100)
                         instead of eBPF at the slaves
  --no-mouse             the dashboard leaves the mouse to the terminal (by
                         default a click selects a row or panel, the wheel scrolls)
  --ovs-rundir DIR       where ovsdb-server's db.sock and ovs-vswitchd's
                         control socket are (default /var/run/openvswitch);
                         Open vSwitch bonds are shown beside Linux bonds
  --prometheus URL       the fleet: every bond of every host a Prometheus
                         holds bondtop metrics for, worst first (with --once,
                         --count N --json, or list; docs/fleet.md)
  --prometheus-match SEL with --prometheus: scope it, e.g. '{job="bondtop",dc="fra1"}'
  --prometheus.config.file FILE
                         with --prometheus: auth, TLS and proxy, in
                         Prometheus' http_config format
  --version              print the version and exit
  -h, --help             this help

Hash (which slave will a flow take?):
  --proto tcp|udp        live: the flow's protocol (default tcp)
  --sport N              live: the source port (default: how the kernel's
                         ephemeral ports spread over the slaves)
  --src ADDR             live: the source address (default: the route's)
  --policy POLICY        offline: layer2, layer2+3, layer3+4, encap2+3,
                         encap3+4, vlan+srcmac (or 0-5)
  --slaves NAME,...      offline: the slaves that can transmit, in enslave order
  --src-mac MAC          offline: the bond's MAC address
  --no-l4-hash           offline, encap3+4: the packets carry no socket or
                         RSS hash (forwarded, unconnected UDP)
  --kernel VERSION       hash as that kernel version does (default: this
                         host's running kernel, e.g. 6.1 or 5.15.38)
  Offline input: one UDP flow a line, "SRC_IP DST_IP SPORT DPORT DST_MAC"
  (IPv4 or IPv6). Output, line for line: "SLAVE HASH INDEX", or
  "- unpredictable" (reason on stderr), or "- error" for a line that is not a
  flow (line number and reason on stderr, exit code 1). Empty lines and
  # comments are copied.

Examples:
  bondtop --demo                         try it: a simulated host with two bonds
  bondtop bond0                          watch bond0
  bondtop --once bond0                   a one-shot table of bond0's slaves
  bondtop --once --json | jq .           every bond, rates over one second
  bondtop --count 60 --json bond0 >log   a minute of JSON lines
  bondtop list                           which bonds are here
  bondtop --root ./bundle --once         a support bundle copied from a server
  bondtop --listen :9843 --headless      a fleet host for Prometheus to scrape
  bondtop list --prometheus http://prom:9090  every bond of the fleet, worst first
  bondtop --record incident.rec bond0    watch and keep what was seen
  bondtop --replay incident.rec --speed 10  play it back, ten times faster
  bondtop hash bond0 10.0.0.5:443        which slave carries a connection to 10.0.0.5:443
  bondtop hash --policy layer3+4 --slaves eth0,eth1 --src-mac 52:54:00:12:34:56 <flows.txt

JSON fields are documented in docs/json.md; keys are snake_case and stable.
`

// options are the parsed command line.
type options struct {
	root     string
	demo     bool
	listen   string
	headless bool
	record   string
	replay   string
	speed    float64
	// sinks receive every snapshot (metrics, recorder), set up by run.
	// sinkKeeps is set when one keeps the snapshot past its call (the
	// metrics server serves the latest): no snapshot is filled again.
	sinks     []func(*model.Snapshot)
	sinkKeeps bool
	// readFailed hears of every failed read in --headless (the metrics'
	// error count); nil without --listen.
	readFailed func()
	// metricsWake asks --headless's Sampler for a snapshot now: a scrape
	// wants fresh counters (metrics.Exporter.Wake); nil without --listen.
	metricsWake <-chan struct{}
	// webConfig is the metrics server's TLS and basic auth (a web config
	// file); "" serves plain HTTP to anyone.
	webConfig string
	// metricsScheme is "https" when the web config turns TLS on, "http"
	// otherwise: what the "serving metrics on" line says.
	metricsScheme string
	// flows lists the host's sockets for the flow table (live only; the
	// demo source lists its own); nil without one.
	flows collector.FlowReader
	// meter counts every flow on the slaves (live only; the demo
	// simulates its own); meterWhy says why there is none.
	meter       flowmeter.Meter
	meterWhy    string
	top         int
	flowMapSize int
	meterBudget int
	noEBPF      bool
	ovsRunDir   string
	interval    time.Duration
	once        bool
	count       int
	json        bool
	version     bool
	bonds       []string
	command     string // "" (watch) or "list"
	noMouse     bool
	fleet       fleetOptions
}

func main() {
	stopProfiles := startProfiles(os.Stderr)
	// Every message on standard error can quote a name, a flag or a file
	// from outside: each is shown, never obeyed (docs/security.md).
	code := run(os.Args[1:], os.Stdout, printable.NewWriter(os.Stderr))
	stopProfiles()
	os.Exit(code)
}

// run is main without the process: it returns the exit code, so tests can
// call it.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "hash" {
		return runHash(args[1:], os.Stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "load" {
		return runLoad(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "drill" {
		return runDrill(args[1:], os.Stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "serve" {
		return runServe(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "completion" {
		return runCompletion(args[1:], stdout, stderr)
	}
	opts, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usageText)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: %s\nRun 'bondtop -h' for usage.\n", printable.String(err.Error()))
		return exitUsage
	}
	if opts.version {
		fmt.Fprintf(stdout, "bondtop %s%s\n", buildVersion(), buildNote)
		return exitOK
	}

	if opts.fleet.url != "" {
		return fail(stderr, runFleet(opts, stdout))
	}
	if opts.replay != "" {
		return fail(stderr, replay(opts, stdout, stderr))
	}

	src, err := openSource(opts)
	if err != nil {
		return fail(stderr, err)
	}
	defer src.Close()

	if opts.record != "" {
		sink, finish, err := startRecording(opts.record, opts)
		if err != nil {
			return fail(stderr, err)
		}
		opts.sinks = append(opts.sinks, sink)
		defer func() {
			if err := finish(); err != nil {
				fmt.Fprintf(stderr, "bondtop: the recording %s is incomplete: %s\n", printable.String(opts.record), printable.String(err.Error()))
			}
		}()
	}

	if !opts.demo && opts.root == "" && opts.command == "" {
		// The flow table is an extra: without sock_diag the rest works.
		if lf, err := live.NewFlows(); err == nil {
			defer lf.Close()
			opts.flows = lf
		}
		if m, why := startMeter(&opts); m != nil {
			defer m.Close()
			opts.meter = m
		} else {
			opts.meterWhy = why
		}
	}

	if opts.listen != "" {
		exp, stop, err := startMetrics(opts.listen, opts.webConfig, stderr)
		if err != nil {
			return fail(stderr, err)
		}
		defer stop()
		opts.sinks = append(opts.sinks, exp.Update)
		opts.sinkKeeps = true
		opts.readFailed = exp.ReadFailed
		if opts.headless {
			opts.metricsWake = exp.Wake()
		}
	}
	if opts.headless {
		// No driver, no bonds, no root: states to serve and log once,
		// never a reason to exit (docs/prometheus.md).
		opts.sinks = append(opts.sinks, newStateLog(stderr).sink)
	}

	switch {
	case opts.command == "list":
		return fail(stderr, listBonds(src, opts.json, stdout))
	case opts.once:
		return fail(stderr, sampleAndPrint(src, opts, 1, stdout))
	case opts.count > 0:
		return fail(stderr, sampleAndPrint(src, opts, opts.count, stdout))
	case opts.headless:
		return fail(stderr, headless(src, opts, stderr))
	case isTerminal(stdout):
		return fail(stderr, dashboard(src, opts))
	default:
		return fail(stderr, watch(src, opts, stdout))
	}
}

// fail prints err in the user's terms and maps it to an exit code.
func fail(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	// Errors can quote names and text read from the host, a tree or a
	// recording.
	fmt.Fprintf(stderr, "bondtop: %s\n", printable.String(err.Error()))
	var nf *collector.NotFoundError
	var ue usageError
	if errors.As(err, &nf) || errors.As(err, &ue) {
		return exitUsage
	}
	return exitRuntime
}

// usageError is a mistake in the command line found after parsing (a
// value its reader refuses): it exits as a bad flag does.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bondtop", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed once, by run
	fs.StringVar(&o.root, "root", "", "")
	fs.BoolVar(&o.demo, "demo", false, "")
	webFlags(fs, &o)
	fs.StringVar(&o.record, "record", "", "")
	fs.StringVar(&o.replay, "replay", "", "")
	fs.Float64Var(&o.speed, "speed", 1, "")
	fs.BoolVar(&o.headless, "headless", false, "")
	fs.DurationVar(&o.interval, "interval", collector.DefaultInterval, "")
	fs.BoolVar(&o.once, "once", false, "")
	fs.IntVar(&o.count, "count", 0, "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVar(&o.version, "version", false, "")
	fs.IntVar(&o.top, "top", defaultTop, "")
	fs.IntVar(&o.flowMapSize, "flow-map-size", flowmeter.DefaultMaxFlows, "")
	fs.IntVar(&o.meterBudget, "meter-budget", flowmeter.DefaultBudget, "")
	fs.BoolVar(&o.noEBPF, "no-ebpf", false, "")
	fs.BoolVar(&o.noMouse, "no-mouse", false, "")
	fs.StringVar(&o.ovsRunDir, "ovs-rundir", "", "")
	registerFleetFlags(fs, &o.fleet)

	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return o, err
	}
	if len(positional) > 0 && positional[0] == "list" {
		o.command = "list"
		positional = positional[1:]
	}
	o.bonds = positional

	switch {
	case o.interval < collector.MinInterval:
		return o, fmt.Errorf("--interval %v is too short: use %v or more", o.interval, collector.MinInterval)
	case o.top < 0:
		return o, fmt.Errorf("--top %d: give how many flows per bond to keep (0 for none)", o.top)
	case o.flowMapSize < 1024 || o.flowMapSize > 1<<24:
		return o, fmt.Errorf("--flow-map-size %d: give between 1024 and 16777216 flows (default %d)", o.flowMapSize, flowmeter.DefaultMaxFlows)
	case o.meterBudget < 0:
		return o, fmt.Errorf("--meter-budget %d: give packets per second per CPU (default %d; 0 counts every packet)", o.meterBudget, flowmeter.DefaultBudget)
	case o.count < 0:
		return o, fmt.Errorf("--count %d: give a positive number of samples", o.count)
	case o.once && o.count > 0:
		return o, errors.New("--once and --count exclude each other: --once is --count 1")
	case o.replay != "" && (o.demo || o.root != "" || o.listen != "" || o.record != "" || o.command != ""):
		return o, errReplayFlags
	case o.speed <= 0 || o.speed > 1000:
		return o, fmt.Errorf("--speed %v: give a factor between 0 and 1000 (2 plays twice as fast)", o.speed)
	case o.headless && o.listen == "":
		return o, errors.New("--headless needs --listen ADDR:PORT (it only serves metrics)")
	case o.headless && (o.once || o.count > 0):
		return o, errors.New("--headless runs until stopped: drop --once/--count")
	case o.demo && o.root != "":
		return o, errors.New("--demo and --root exclude each other: the demo is a simulated host")
	case o.json && !o.once && o.count == 0 && o.command == "" && o.replay == "":
		return o, errors.New("--json needs --once or --count N (the dashboard is interactive)")
	}
	if err := checkFleetFlags(o); err != nil {
		return o, err
	}
	scheme, err := checkWebConfig(o.listen, o.webConfig)
	if err != nil {
		return o, err
	}
	o.metricsScheme = scheme
	for _, b := range o.bonds {
		if strings.ContainsAny(b, "/\x00") || b == "." || b == ".." || strings.HasPrefix(b, "-") {
			return o, fmt.Errorf("%q is not an interface name", b)
		}
	}
	return o, nil
}

func openSource(o options) (collector.Source, error) {
	if o.demo {
		return demo.New(time.Now), nil
	}
	if o.root != "" {
		return rootdir.New(o.root)
	}
	src, err := live.New()
	if err != nil {
		return nil, err
	}
	src.ReadOVS(o.ovsRunDir)
	return src, nil
}

func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "(devel)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}

// parseInterleaved parses flags that may follow positional arguments
// ("bondtop bond0 --once"), as admins type them; the standard parser stops
// at the first positional one. It returns the positional arguments in order.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
