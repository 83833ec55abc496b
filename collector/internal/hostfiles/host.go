// Package hostfiles is what the sources that read a host's files share
// (the live host through /, a --root tree through its guarded file
// system): the host-wide settings a diagnosis needs, the configuration
// files with the running settings they are compared with, and the
// warnings a garbled file adds to a reading, a few per file.
package hostfiles

import (
	"io/fs"
	"strconv"
	"strings"

	"github.com/bondtop/bondtop/model"
)

// ReadHost reads the settings of the host whose /proc is in fsys.
func ReadHost(fsys fs.FS) model.Host {
	var h model.Host
	if b, err := fs.ReadFile(fsys, "proc/sys/net/ipv4/tcp_reordering"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			h.TCPReordering = &n
		}
	}
	return h
}
