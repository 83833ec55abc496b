package bonding

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDeviceAdapter(t *testing.T) {
	for _, tc := range []struct {
		d    Device
		want string
	}{
		{Device{}, ""},
		{Device{PCI: "0000:3b:00.1"}, "0000:3b:00"},
		{Device{PCI: "0000:3b:02.3", PhysFn: "0000:5e:00.0"}, "0000:5e:00"},
	} {
		if got := tc.d.Adapter(); got != tc.want {
			t.Errorf("%+v: adapter %q, want %q", tc.d, got, tc.want)
		}
	}
}

// ReadDevice follows sysfs's links: device to the PCI function, physfn
// from a VF to its PF; a virtual interface (no device link) has none.
func TestReadDevice(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("sys/devices/pci0000:00/0000:3b:00.0")
	mk("sys/devices/pci0000:00/0000:3b:02.1")
	mk("sys/class/net/pf0")
	mk("sys/class/net/vf1")
	mk("sys/class/net/veth0")
	link("../0000:3b:00.0", "sys/devices/pci0000:00/0000:3b:02.1/physfn")
	link("../../../devices/pci0000:00/0000:3b:00.0", "sys/class/net/pf0/device")
	link("../../../devices/pci0000:00/0000:3b:02.1", "sys/class/net/vf1/device")
	fsys := os.DirFS(dir)
	for name, want := range map[string]Device{
		"pf0":   {PCI: "0000:3b:00.0"},
		"vf1":   {PCI: "0000:3b:02.1", PhysFn: "0000:3b:00.0"},
		"veth0": {},
		"gone":  {},
	} {
		if got := ReadDevice(fsys, name); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}

func TestReadOptionsLabTree(t *testing.T) {
	opts, err := ReadOptions(os.DirFS("../testdata/lab/LACP_slaves-2"), "bond0")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"mode": "802.3ad 4", "lacp_rate": "fast 1", "miimon": "100", "arp_ip_target": "", "num_grat_arp": "1"} {
		if got, ok := opts[k]; !ok || got != want {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, want)
		}
	}
	if _, err := ReadOptions(os.DirFS("../testdata/lab/LACP_slaves-2"), "dut0"); err == nil {
		t.Error("a slave has no bonding/ directory: want an error")
	}
}
