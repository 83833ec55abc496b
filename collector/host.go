package collector

import (
	"github.com/bondtop/bondtop/model"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// hostRefresh is how often the Sampler re-reads host settings.
const hostRefresh = 10 * time.Second

// readHost reads the settings of the host whose /proc is in fsys.
func readHost(fsys fs.FS) model.Host {
	var h model.Host
	if b, err := fs.ReadFile(fsys, "proc/sys/net/ipv4/tcp_reordering"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			h.TCPReordering = &n
		}
	}
	return h
}

// ReadHost reads DIR/proc/sys.
func (s *RootSource) ReadHost() model.Host { return readHost(s.fsys) }

// ReadHost gives the simulated host's settings: Linux's defaults.
func (d *DemoSource) ReadHost() model.Host { return model.Host{TCPReordering: new(3)} }

// hostCache re-reads a HostReader every hostRefresh.
// latest is shared by the snapshots until it changes: it is replaced,
// never modified.
type hostCache struct {
	r      HostReader
	at     time.Time
	latest *model.Host // nil when nothing could be read
}

func (c *hostCache) get(now time.Time) *model.Host {
	if c.at.IsZero() || now.Sub(c.at) >= hostRefresh {
		h := c.r.ReadHost()
		c.at = now
		c.latest = nil
		if h.TCPReordering != nil {
			c.latest = &h
		}
	}
	return c.latest
}
