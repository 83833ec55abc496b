package load

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/netpath"
)

// Place plans through the route's Placement and always sets the source
// address; a route without a Placement fails the placing strategies with
// its reason and the bond's name, and leaves no half plan behind.
func TestRoutePlace(t *testing.T) {
	src := netip.MustParseAddr("10.0.0.1")
	r := &Route{Bond: "bond0", Path: netpath.Path{Src: src}, Placement: testPlacement(t, bonding.PolicyLayer34, "eth0", "eth1")}
	cfg := Config{Streams: 4}
	if err := r.Place(&cfg, Spread, ""); err != nil {
		t.Fatal(err)
	}
	if cfg.Source != src || len(cfg.SourcePorts) != 4 || len(cfg.PredictedSlaves) != 4 {
		t.Fatalf("spread: source %v, %d port lists, %d slaves", cfg.Source, len(cfg.SourcePorts), len(cfg.PredictedSlaves))
	}
	for i, ports := range cfg.SourcePorts {
		if got := r.Predict(ports[0]); got != cfg.PredictedSlaves[i] {
			t.Errorf("stream %d: port %d predicted on %s, planned %s", i, ports[0], got, cfg.PredictedSlaves[i])
		}
	}

	none := &Route{Bond: "bond0", Path: netpath.Path{Src: src}, PlaceErr: ErrNoNeighbour}
	cfg = Config{Streams: 2, SourcePorts: [][]uint16{{1}}}
	err := none.Place(&cfg, OneSlave, "eth0")
	if !errors.Is(err, ErrNoNeighbour) || !strings.HasPrefix(err.Error(), "bond0: ") {
		t.Errorf("no placement, one slave: %v", err)
	}
	if cfg.SourcePorts != nil || cfg.Source != src {
		t.Errorf("no placement: ports %v source %v", cfg.SourcePorts, cfg.Source)
	}
	if err := none.Place(&cfg, KernelPorts, ""); err != nil {
		t.Errorf("kernel ports need no placement: %v", err)
	}
	if s := none.Predict(40000); s != "" {
		t.Errorf("no placement predicts %q", s)
	}
	var nilRoute *Route
	if s := nilRoute.Predict(40000); s != "" {
		t.Errorf("nil route predicts %q", s)
	}
}

func TestResolveHostAddress(t *testing.T) {
	a, err := ResolveHost(context.Background(), "fe80::1%eth0")
	if err != nil || a != netip.MustParseAddr("fe80::1") {
		t.Errorf("fe80::1%%eth0: %v %v", a, err)
	}
	if _, err := ResolveHost(context.Background(), "no-such-host.invalid"); err == nil || !strings.Contains(err.Error(), "give an IP address?") {
		t.Errorf("unresolvable name: %v", err)
	}
}
