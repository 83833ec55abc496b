package intent

import (
	"io/fs"
	"os"
	"strings"
	"testing"
)

// seedFixtures adds every fixture file whose name has suffix as a seed.
func seedFixtures(f *testing.F, dir string, keep func(string) bool) {
	err := fs.WalkDir(os.DirFS("testdata"), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !keep(p) {
			return err
		}
		data, err := os.ReadFile("testdata/" + p)
		f.Add(data)
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
}

// checkParsed holds for whatever a parser returns: options in the
// kernel's words (Canonical leaves them as they are) with a place in a
// file, a bond name, no empty slave names.
func checkParsed(t *testing.T, bonds []Bond, file string) {
	t.Helper()
	for _, b := range bonds {
		if b.Name == "" || b.Options == nil || b.Slaves == nil {
			t.Fatalf("half-made bond %+v", b)
		}
		for opt, v := range b.Options {
			if opt == "primary" {
				continue // an interface name netplan resolved
			}
			if c, err := Canonical(opt, v); err != nil || c != v {
				t.Fatalf("%s: option %s=%q is not in the kernel's words (%q, %v)", b.Name, opt, v, c, err)
			}
			if at, ok := b.OptionAt[opt]; !ok || at.File != file {
				t.Fatalf("%s: option %s has no place (%+v)", b.Name, opt, at)
			}
		}
		for _, s := range b.Slaves {
			if strings.TrimSpace(s) == "" {
				t.Fatalf("%s: empty slave name in %q", b.Name, b.Slaves)
			}
		}
		if b.MTU != nil && (*b.MTU < 68 || *b.MTU > 65535) {
			t.Fatalf("%s: MTU %d", b.Name, *b.MTU)
		}
	}
}

func FuzzNetplan(f *testing.F) {
	for _, c := range netplanCases {
		for _, y := range c {
			f.Add([]byte(y))
		}
	}
	f.Add([]byte("network: {bonds: {b: {interfaces: x, parameters: {mode: 9, arp-ip-targets: [a]}}}}"))
	f.Add([]byte("network:\n  bonds:\n    b:\n      mtu: [1]\n      parameters: {mii-monitor-interval: 99999999999min}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bonds, _ := ParseNetplan([]File{{Path: "/etc/netplan/a.yaml", Data: data}})
		checkParsed(t, bonds, "/etc/netplan/a.yaml")
	})
}

func FuzzNMKeyfile(f *testing.F) {
	seedFixtures(f, "nm", func(string) bool { return true })
	f.Add([]byte("[connection]\ntype=bond\ninterface-name=b\nmaster=b\n[bond]\nmode=99\n[ethernet]\nmtu=x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bonds, _ := ParseNMKeyfiles([]File{{Path: "/k", Data: data}})
		checkParsed(t, bonds, "/k")
	})
}

func FuzzIfcfg(f *testing.F) {
	seedFixtures(f, "ifcfg", func(string) bool { return true })
	f.Add([]byte("DEVICE=\"b\\\"x\nTYPE=Bond\nBONDING_OPTS='mode=4 =1 arp_ip_target=+1.2.3.4'\nMASTER=b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bonds, _ := ParseIfcfg([]File{{Path: "/etc/sysconfig/network-scripts/ifcfg-b", Data: data}})
		checkParsed(t, bonds, "/etc/sysconfig/network-scripts/ifcfg-b")
	})
}

func FuzzNetworkd(f *testing.F) {
	seedFixtures(f, "networkd", func(p string) bool { return strings.HasSuffix(p, ".netdev") })
	f.Add([]byte("[NetDev]\nName=b\nKind=bond\nMTUBytes=9K\n[Bond]\nARPIPTargets=\nMIIMonitorSec=5min\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bonds, _ := ParseNetworkd([]File{{Path: "/a.netdev", Data: data}})
		checkParsed(t, bonds, "/a.netdev")
	})
}

func FuzzIfupdown(f *testing.F) {
	seedFixtures(f, "ifupdown", func(string) bool { return true })
	f.Add([]byte("iface b\n bond-slaves \\\n x\n mtu 1\n bond-master b\niface\nsource a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bonds, _ := ParseIfupdown([]File{{Path: "/etc/network/interfaces", Data: data}})
		// A bond-master line places slaves only; options need a file.
		checkParsed(t, bonds, "/etc/network/interfaces")
		IfupdownSources(File{Path: "/etc/network/interfaces", Data: data})
	})
}
