package main

// `bondtop drill`: a failover drill on one bond. The drill itself is
// package drill; this file turns flags into drill.Options, asks before it
// changes anything, and prints the result.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/bondtop/bondtop/drill"
	"github.com/bondtop/bondtop/internal/printable"
)

const drillUsage = `bondtop drill - measure what a failover really costs

Usage:
  bondtop drill BOND --peer HOST[:PORT] [flags]
  bondtop drill BOND --restore

Takes one slave of BOND away, brings it back, and measures both steps:
the time to the bond's own event, the longest gap each way, packets lost
and reordered, the gratuitous ARPs / unsolicited NAs sent, and for 802.3ad
when the aggregator settled. The measuring stream is small UDP datagrams
to HOST, which runs bondtop serve or iperf3 -s (port 5201 unless given).
Needs root. The slave and the active slave are put back on every way out
(^C, SIGTERM, an error); after a kill -9, --restore puts them back.

Flags:
  --peer HOST[:PORT]   the measuring peer (bondtop serve or iperf3 -s)
  --slave NAME         the slave to take away (default: the active one,
                       else the one carrying the most traffic)
  --how down|active    down (default): set the slave administratively down,
                       as a pulled cable; active: move active_slave away
                       (active-backup, balance-tlb, balance-alb)
  --hold DURATION      how long the slave stays away (default 5s)
  --direction both|rx|tx
                       which way the measuring stream flows (default both);
                       rx: only the peer sends, as to a server that mostly
                       receives, and this host sends nothing of its own from
                       the failover to the end of the failback, so the
                       switch learns the move from the bond alone
  --rate N             datagrams per second each way (default 1000)
  --force              also take away the bond's last usable slave
  --plan               print what would be done, change nothing
  --yes                do not ask before changing the bond
  --json               one JSON document instead of the table
  --restore            put back what a killed drill left changed
`

type drillCLI struct {
	opts                  drill.Options
	plan, yes, json, rest bool
}

func parseDrillArgs(args []string) (drillCLI, error) {
	var c drillCLI
	fs := flag.NewFlagSet("bondtop drill", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.opts.Peer, "peer", "", "")
	fs.StringVar(&c.opts.Slave, "slave", "", "")
	how := fs.String("how", "down", "")
	fs.DurationVar(&c.opts.Hold, "hold", drill.DefaultHold, "")
	dir := fs.String("direction", "both", "")
	fs.IntVar(&c.opts.Rate, "rate", drill.DefaultRate, "")
	fs.BoolVar(&c.opts.Force, "force", false, "")
	fs.BoolVar(&c.plan, "plan", false, "")
	fs.BoolVar(&c.yes, "yes", false, "")
	fs.BoolVar(&c.json, "json", false, "")
	fs.BoolVar(&c.rest, "restore", false, "")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return c, err
	}
	if len(positional) != 1 {
		return c, errors.New("drill: give one bond: bondtop drill BOND --peer HOST")
	}
	c.opts.Bond = positional[0]
	c.opts.How, c.opts.Direction = drill.How(*how), drill.Direction(*dir)
	if c.rest {
		if _, err := drill.StatePath(drill.DefaultStateDir, c.opts.Bond); err != nil {
			return c, fmt.Errorf("drill: %w", err)
		}
		return c, nil
	}
	if err := c.opts.Validate(); err != nil {
		return c, fmt.Errorf("drill: %w", err)
	}
	return c, nil
}

// runDrill is `bondtop drill ARGS`; it returns the exit code: 2 for a
// usage error, a drill refused (no root, the last usable slave) or not
// confirmed, 1 when it failed while running.
func runDrill(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := parseDrillArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, drillUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: %v\nRun 'bondtop drill -h' for usage.\n", err)
		return exitUsage
	}
	if c.rest {
		st, err := drill.Restore(drill.DefaultStateDir, c.opts.Bond)
		switch {
		case err != nil:
			return drillFail(stderr, err)
		case st == nil:
			fmt.Fprintf(stdout, "%s: no drill left anything to restore\n", c.opts.Bond)
		default:
			fmt.Fprintf(stdout, "%s: restored %s (admin %s%s), left by drill pid %d of %s\n", st.Bond, st.Slave,
				map[bool]string{true: "up", false: "down"}[st.SlaveWasUp], activeWords(st.ActiveBefore), st.PID, st.Started.Format("2006-01-02 15:04:05"))
		}
		return exitOK
	}
	if !c.plan && os.Geteuid() != 0 {
		return drillFail(stderr, drill.ErrNotRoot)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	d, err := drill.Prepare(ctx, c.opts)
	if err != nil {
		return drillFail(stderr, err)
	}
	if c.plan {
		fmt.Fprint(stdout, d.Describe())
		fmt.Fprintln(stdout, "(--plan: nothing was changed)")
		return exitOK
	}
	if !c.yes {
		fmt.Fprint(stderr, d.Describe())
		if f, ok := stdin.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
			fmt.Fprintln(stderr, "bondtop: drill: not confirmed: standard input is not a terminal (add --yes)")
			return exitUsage
		}
		fmt.Fprint(stderr, "Go ahead? [y/N] ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(stderr, "bondtop: drill: not confirmed: nothing was changed")
			return exitUsage
		}
	}
	progress := func(s string) {
		if !c.json {
			fmt.Fprintf(stderr, "bondtop: drill: %s\n", s)
		}
	}
	res, err := d.Run(ctx, progress)
	if res != nil {
		if c.json {
			res.WriteJSON(printable.NewJSONWriter(stdout))
		} else {
			res.WriteText(stdout)
		}
	}
	return drillFail(stderr, err)
}

func activeWords(a string) string {
	if a == "" {
		return ""
	}
	return ", active slave " + a
}

func drillFail(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	code := fail(stderr, err)
	if errors.Is(err, drill.ErrNotRoot) || errors.Is(err, drill.ErrRefused) {
		return exitUsage
	}
	return code
}
