package main

import (
	"errors"
	"flag"
)

// systemdListen stands for --web.systemd-socket where an address would
// be: the metrics server takes the socket systemd passes (LISTEN_FDS).
const systemdListen = "(systemd socket)"

// webFlags registers the metrics server's flags: --listen and its
// exporter-toolkit name --web.listen-address (one address, given once),
// --web.systemd-socket, --web.config.file.
func webFlags(fs *flag.FlagSet, o *options) {
	set := func(v string) error {
		if o.listen != "" && o.listen != v {
			return errors.New("--listen, --web.listen-address, --web.systemd-socket: give one address, once")
		}
		o.listen = v
		return nil
	}
	fs.Func("listen", "", set)
	fs.Func("web.listen-address", "", set)
	fs.BoolFunc("web.systemd-socket", "", func(v string) error {
		if v != "true" {
			return nil
		}
		return set(systemdListen)
	})
	fs.StringVar(&o.webConfig, "web.config.file", "", "")
}
