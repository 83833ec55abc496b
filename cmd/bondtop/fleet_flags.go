package main

import (
	"errors"
	"flag"
	"fmt"
)

// fleetOptions are the flags of the fleet view: every bond of every host,
// read from Prometheus (docs/fleet.md).
type fleetOptions struct {
	url        string
	match      string
	configFile string
}

func registerFleetFlags(fs *flag.FlagSet, o *fleetOptions) {
	fs.StringVar(&o.url, "prometheus", "", "")
	fs.StringVar(&o.match, "prometheus-match", "", "")
	fs.StringVar(&o.configFile, "prometheus.config.file", "", "")
}

// checkFleetFlags rejects what does not go with --prometheus: the flags
// that choose or serve a local source.
func checkFleetFlags(o options) error {
	f := o.fleet
	if f.url == "" {
		if f.match != "" || f.configFile != "" {
			return errors.New("--prometheus-match and --prometheus.config.file need --prometheus URL")
		}
		return nil
	}
	switch {
	case o.demo || o.root != "" || o.replay != "":
		return errors.New("--prometheus reads the fleet from Prometheus: drop --demo, --root and --replay")
	case o.listen != "" || o.headless || o.record != "":
		return errors.New("--prometheus does not serve or record: drop --listen, --headless and --record")
	case len(o.bonds) > 0:
		return fmt.Errorf("--prometheus lists every bond: to scope it, use --prometheus-match '{instance=\"host:9100\"}' instead of %q", o.bonds[0])
	}
	return fleetSupported()
}
