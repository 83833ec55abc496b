package collector

import (
	"time"

	"github.com/bondtop/bondtop/model"
)

// hostRefresh is how often the Sampler re-reads host settings.
const hostRefresh = 10 * time.Second

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
