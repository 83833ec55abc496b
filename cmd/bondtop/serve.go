package main

// `bondtop serve`: an iperf3 server (load.Server), so `iperf3 -c` and
// `bondtop load` on another host can test towards this one.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bondtop/bondtop/load"
)

const serveUsage = `bondtop serve - an iperf3 server: iperf3 -c and bondtop load test against it

Usage:
  bondtop serve [--listen ADDR:PORT] [--max-duration SEC]

Flags:
  --listen ADDR:PORT   where to listen (default :5201; TCP and, for UDP
                       tests, UDP on the same port)
  --max-duration SEC   end any test after SEC seconds (default 3600)

One test at a time: a second client is told the server is busy. ^C stops.
`

// runServe is `bondtop serve ARGS`; it returns the exit code.
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bondtop serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", fmt.Sprintf(":%d", load.DefaultPort), "")
	maxSecs := fs.Int("max-duration", int(load.MaxDuration.Seconds()), "")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, serveUsage)
		return exitOK
	case err == nil && fs.NArg() > 0:
		err = fmt.Errorf("unexpected %q: serve takes only flags", fs.Arg(0))
	case err == nil && *maxSecs < 1:
		err = fmt.Errorf("--max-duration %d: at least 1 second", *maxSecs)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: serve: %v\nRun 'bondtop serve -h' for usage.\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &load.Server{
		MaxDuration: time.Duration(*maxSecs) * time.Second,
		Logf: func(format string, a ...any) {
			fmt.Fprintf(stdout, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
		},
	}
	ln, err := load.Listen(*listen)
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: serve: %v\n", err)
		return exitRuntime
	}
	// Said once the port is ours, so the line is never a false promise.
	fmt.Fprintf(stdout, "bondtop serve: listening on %s (iperf3 protocol, one test at a time)\n", ln.Addr())
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "bondtop: serve: %v\n", err)
		return exitRuntime
	}
	return exitOK
}
