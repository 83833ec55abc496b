package main

// `bondtop serve`: an iperf3 server (load.Server), so `iperf3 -c` and
// `bondtop load` on another host can test towards this one.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/bondtop/bondtop/internal/printable"
	"github.com/bondtop/bondtop/load"
)

const serveUsage = `bondtop serve - an iperf3 server: iperf3 -c and bondtop load test against it

Usage:
  bondtop serve [--listen ADDR:PORT] [--allow CIDR,...] [--max-rate RATE]
                [--max-duration SEC]

Flags:
  --listen ADDR:PORT   where to listen (default :5201: every IPv4 and IPv6
                       address of this host; TCP and, for UDP tests, UDP on
                       the same port). Give one address, e.g.
                       10.0.0.5:5201, to listen on that one only.
  --allow CIDR,...     serve only clients from these networks or addresses
                       (e.g. 10.0.0.0/24,fd00::/64,192.0.2.7); others are
                       closed before a byte is read. Default: anyone who
                       reaches the port.
  --max-rate RATE      at most RATE bit/s per test, all streams and both
                       directions together (K, M, G: 500M, 2.5G). A client
                       asking for more, or for UDP without a rate (-b 0),
                       is refused; one sending more is stopped with an
                       error. Default: no cap.
  --max-duration SEC   end any test after SEC seconds (default 3600)

Anyone who reaches the port can make this host send and receive as much
as the path carries, for up to --max-duration: on a host reachable from
untrusted networks, use --allow and --max-rate. One test at a time: a
second client is told the server is busy. ^C stops.
`

// runServe is `bondtop serve ARGS`; it returns the exit code.
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bondtop serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", fmt.Sprintf(":%d", load.DefaultPort), "")
	maxSecs := fs.Int("max-duration", int(load.MaxDuration.Seconds()), "")
	allowList := fs.String("allow", "", "")
	maxRate := fs.String("max-rate", "", "")
	err := fs.Parse(args)
	var allow []netip.Prefix
	var rate uint64
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, serveUsage)
		return exitOK
	case err == nil && fs.NArg() > 0:
		err = fmt.Errorf("unexpected %q: serve takes only flags", fs.Arg(0))
	case err == nil && *maxSecs < 1:
		err = fmt.Errorf("--max-duration %d: at least 1 second", *maxSecs)
	case err == nil:
		allow, err = parseAllow(*allowList)
	}
	if err == nil && *maxRate != "" {
		rate, err = load.ParseRate(*maxRate)
		if err == nil && rate == 0 {
			err = errors.New("--max-rate 0: give a rate above 0, or leave the flag out for no cap")
		}
		if err != nil {
			err = fmt.Errorf("--max-rate: %w", err)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: serve: %s\nRun 'bondtop serve -h' for usage.\n", printable.String(err.Error()))
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &load.Server{
		MaxDuration: time.Duration(*maxSecs) * time.Second,
		Allow:       allow,
		MaxRate:     rate,
		// A log line can quote what a client sent (its test parameters,
		// an error naming them): made printable like every text output.
		Logf: func(format string, a ...any) {
			fmt.Fprintf(stdout, "%s %s\n", time.Now().Format("15:04:05"), printable.String(fmt.Sprintf(format, a...)))
		},
	}
	ln, err := load.Listen(*listen)
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: serve: %s\n", printable.String(err.Error()))
		return exitRuntime
	}
	// Said once the port is ours, so the line is never a false promise.
	fmt.Fprintf(stdout, "bondtop serve: listening on %s (iperf3 protocol, one test at a time)\n", ln.Addr())
	if warning := exposure(ln.Addr(), allow, rate); warning != "" {
		fmt.Fprintf(stdout, "bondtop serve: %s\n", printable.String(warning))
	}
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "bondtop: serve: %s\n", printable.String(err.Error()))
		return exitRuntime
	}
	return exitOK
}

// parseAllow reads --allow: networks (10.0.0.0/24) or single addresses,
// separated by commas.
func parseAllow(list string) ([]netip.Prefix, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("--allow %q: want networks or addresses separated by commas, e.g. 10.0.0.0/24,fd00::/64,192.0.2.7", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// exposure says what is open to whom when the server listens on every
// address without --allow, and how to narrow it; "" otherwise.
func exposure(addr net.Addr, allow []netip.Prefix, rate uint64) string {
	ta, ok := addr.(*net.TCPAddr)
	if !ok || !ta.IP.IsUnspecified() || len(allow) > 0 {
		return ""
	}
	s := "open to anyone who reaches any address of this host; --allow CIDR,... limits who may test"
	if rate == 0 {
		s += ", --max-rate RATE how much"
	}
	return s
}
