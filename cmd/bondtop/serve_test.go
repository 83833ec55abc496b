package main

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestParseAllow(t *testing.T) {
	got, err := parseAllow(" 10.0.0.7/24, 192.0.2.1,fd00::/64,::ffff:198.51.100.9 ")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/24"), // masked: the network, as written means
		netip.MustParsePrefix("192.0.2.1/32"),
		netip.MustParsePrefix("fd00::/64"),
		netip.MustParsePrefix("198.51.100.9/32"), // unmapped, as connections are
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if p, err := parseAllow(""); p != nil || err != nil {
		t.Errorf("empty: %v, %v; want no list", p, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "bogus", "10.0.0.1,", "fe80::1%eth0", "10.0.0.0/8 10.1.0.0/16"} {
		if _, err := parseAllow(bad); err == nil || !strings.Contains(err.Error(), "--allow") {
			t.Errorf("%q: %v; want an error naming --allow", bad, err)
		}
	}
}

func TestExposure(t *testing.T) {
	every := &net.TCPAddr{IP: net.IPv6unspecified, Port: 5201}
	if s := exposure(every, nil, 0); !strings.Contains(s, "--allow") || !strings.Contains(s, "--max-rate") {
		t.Errorf("every address, no --allow: %q", s)
	}
	if s := exposure(every, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, 0); s != "" {
		t.Errorf("with --allow: %q", s)
	}
	if s := exposure(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 5201}, nil, 0); s != "" {
		t.Errorf("one address: %q", s)
	}
}

// FuzzParseAllow: any --allow value is a list of valid, masked prefixes
// or an error, never a panic.
func FuzzParseAllow(f *testing.F) {
	for _, s := range []string{"10.0.0.0/24", "192.0.2.1,fd00::/64", "::ffff:1.2.3.4", "", ",", "1.2.3.4/", "fe80::1%x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := parseAllow(s)
		if err != nil {
			return
		}
		for _, p := range ps {
			if !p.IsValid() || p != p.Masked() || p.Addr().Is4In6() {
				t.Errorf("%q gave %v", s, p)
			}
		}
	})
}
