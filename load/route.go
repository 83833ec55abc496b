package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/netpath"
)

// The steps every caller of the engine takes before a test over a bond
// (`bondtop load`, the dashboard's load panel, the failover drill): turn
// the host into one address, find how the bond reaches it, and plan the
// streams with the running kernel's transmit hash. They live here once, so
// the callers differ only in what they do when a step fails.

// ResolveHost turns a host name or address into one address. It may wait
// on DNS for up to 10 s: never call it on a UI's event loop.
func ResolveHost(ctx context.Context, host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.WithZone(""), nil
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(rctx, "ip", host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no address")
	}
	if err != nil {
		return netip.Addr{}, fmt.Errorf("resolving %s: %v (give an IP address?)", host, err)
	}
	return addrs[0].Unmap(), nil
}

// Route is how a test's traffic to a server crosses a bond: the path the
// kernel takes (source address, MACs, VLAN) and, when the bond's hash can
// be read, the Placement of its streams on the slaves.
type Route struct {
	Bond string
	Path netpath.Path
	// Placement is nil when the streams cannot be placed; PlaceErr says
	// why (an unknown mode or policy, no neighbour entry, no kernel
	// version).
	Placement *Placement
	PlaceErr  error
}

// RouteVia is the route to dst:port over bond b. It fails only when the
// kernel does not send to dst through b. When the hash needs the next
// hop's MAC and the host has none yet, it nudges the server once (a
// datagram, about 200 ms) and looks again.
func RouteVia(b *bonding.Bond, dst netip.Addr, proto Protocol, port uint16) (*Route, error) {
	pth, err := netpath.Lookup(b.Name, dst)
	if err != nil {
		return nil, err
	}
	r := &Route{Bond: b.Name, Path: pth}
	k, _, err := bonding.RunningKernel(os.DirFS("/"))
	if err != nil {
		r.PlaceErr = err
		return r, nil
	}
	r.Placement, r.PlaceErr = NewPlacement(b, k, pth, dst, proto, port)
	if errors.Is(r.PlaceErr, ErrNoNeighbour) {
		if port == 0 {
			port = DefaultPort
		}
		netpath.Nudge(dst, port)
		if p, lerr := netpath.Lookup(b.Name, dst); lerr == nil {
			r.Path = p
			r.Placement, r.PlaceErr = NewPlacement(b, k, p, dst, proto, port)
		}
	}
	if r.PlaceErr != nil {
		r.Placement = nil
	}
	return r, nil
}

// Place fills cfg's source address and, for Spread and OneSlave, its
// source ports (slave names OneSlave's slave). The error names the bond;
// what to do with it (fail, or fall back to the kernel's ports) is the
// caller's.
func (r *Route) Place(cfg *Config, s Strategy, slave string) error {
	cfg.Source = r.Path.Src
	if s != Spread && s != OneSlave {
		return nil
	}
	err := r.PlaceErr
	if err == nil {
		err = r.Placement.Apply(cfg, s, slave)
	}
	if err != nil {
		cfg.SourcePorts, cfg.PredictedSlaves = nil, nil
		return fmt.Errorf("%s: %w", r.Bond, err)
	}
	return nil
}

// Predict names the slave a stream from sport leaves by, "" when the
// route (nil too) cannot say.
func (r *Route) Predict(sport uint16) string {
	if r == nil || r.Placement == nil {
		return ""
	}
	s, _ := r.Placement.Predict(sport)
	return s
}
