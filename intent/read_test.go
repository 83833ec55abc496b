package intent

import (
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// want is a bond as a test expects it: what JSON shows plus where the
// bond is defined.
type want struct {
	name, source string
	options      map[string]string
	slaves       []string
	mtu          int // 0: none
	at           string
}

func checkBonds(t *testing.T, got []Bond, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		var names []string
		for _, b := range got {
			names = append(names, b.Name+"/"+b.Source)
		}
		t.Fatalf("got %d bonds %v, want %d", len(got), names, len(wants))
	}
	for i, w := range wants {
		b := got[i]
		if b.Name != w.name || b.Source != w.source {
			t.Errorf("bond %d: %s from %s, want %s from %s", i, b.Name, b.Source, w.name, w.source)
		}
		if diff := cmp.Diff(w.options, b.Options); diff != "" {
			t.Errorf("%s options (-want +got):\n%s", w.name, diff)
		}
		if diff := cmp.Diff(w.slaves, b.Slaves); diff != "" {
			t.Errorf("%s slaves (-want +got):\n%s", w.name, diff)
		}
		mtu := 0
		if b.MTU != nil {
			mtu = *b.MTU
		}
		if mtu != w.mtu {
			t.Errorf("%s MTU %d, want %d", w.name, mtu, w.mtu)
		}
		if w.at != "" && b.At.String() != w.at {
			t.Errorf("%s defined at %s, want %s", w.name, b.At, w.at)
		}
	}
}

// The fixtures are typed from each tool's documentation: the keyfiles
// nmcli writes (nm-settings-keyfile(5)), the ifcfg files of the RHEL
// bonding guide, Debian's interfaces(5) with ifenslave and ifupdown2's
// bond- options, and systemd.netdev(5)'s bond example.
func TestReadFixtures(t *testing.T) {
	for _, tc := range []struct {
		dir   string
		bonds []want
	}{
		{"nm", []want{
			{"bond0", SourceNetworkManager, map[string]string{"miimon": "100", "mode": "802.3ad", "xmit_hash_policy": "layer3+4", "lacp_rate": "fast"},
				[]string{"enp7s0", "enp8s0"}, 9000, "/etc/NetworkManager/system-connections/bond0.nmconnection:4"},
			{"bond1", SourceNetworkManager, map[string]string{"mode": "active-backup", "miimon": "100", "primary": "enp9s0", "fail_over_mac": "active"},
				[]string{}, 0, ""},
		}},
		{"ifcfg", []want{
			{"bond0", SourceIfcfg, map[string]string{"mode": "802.3ad", "miimon": "100", "lacp_rate": "fast", "xmit_hash_policy": "layer3+4"},
				[]string{"enp1s0", "enp2s0"}, 9000, "/etc/sysconfig/network-scripts/ifcfg-bond0:3"},
			{"bond1", SourceIfcfg, map[string]string{"mode": "active-backup", "arp_interval": "1000", "arp_ip_target": "192.0.2.254 192.0.2.253", "arp_validate": "all", "primary": "eth4"},
				[]string{}, 0, "/etc/sysconfig/network-scripts/ifcfg-bond1"},
			{"bond2", SourceIfcfg, map[string]string{"downdelay": "0", "miimon": "100", "mode": "balance-xor", "updelay": "0", "xmit_hash_policy": "layer2+3"},
				[]string{"ens9"}, 0, "/etc/sysconfig/network-scripts/ifcfg-bond2:2"},
		}},
		{"ifupdown", []want{
			{"bond0", SourceIfupdown, map[string]string{"mode": "active-backup", "miimon": "100", "downdelay": "200", "updelay": "200", "primary": "eth0"},
				[]string{"eth0", "eth1"}, 0, "/etc/network/interfaces:11"},
			{"bond1", SourceIfupdown, map[string]string{"mode": "802.3ad", "miimon": "100", "lacp_rate": "fast", "min_links": "1", "xmit_hash_policy": "layer3+4", "ad_actor_sys_prio": "100"},
				[]string{"swp1", "swp2"}, 9000, "/etc/network/interfaces.d/bond1:3"},
			{"bond2", SourceIfupdown, map[string]string{"mode": "balance-xor", "miimon": "100", "xmit_hash_policy": "layer2+3"},
				[]string{"eth2", "eth3"}, 0, "/etc/network/interfaces:33"},
		}},
		{"networkd", []want{
			{"bond1", SourceNetworkd, map[string]string{"mode": "802.3ad", "xmit_hash_policy": "layer3+4", "miimon": "1000", "lacp_rate": "fast", "primary": "enp2s0"},
				[]string{"enp1s0", "enp2s0"}, 9000, "/etc/systemd/network/30-bond1.netdev:2"},
			{"bond2", SourceNetworkd, map[string]string{"mode": "active-backup", "miimon": "100", "updelay": "250", "num_grat_arp": "0", "arp_ip_target": "192.0.2.1 192.0.2.2"},
				[]string{"en*"}, 1500, ""},
		}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			c := Read(os.DirFS("testdata/" + tc.dir))
			if !c.Checked {
				t.Fatal("etc/ not seen")
			}
			if len(c.Warnings) > 0 || len(c.Notes) > 0 {
				t.Errorf("warnings %q, notes %q", c.Warnings, c.Notes)
			}
			checkBonds(t, c.Bonds, tc.bonds)
		})
	}
}

func TestReadNoEtc(t *testing.T) {
	c := Read(os.DirFS(t.TempDir()))
	if c.Checked || len(c.Bonds) > 0 {
		t.Errorf("a tree without etc/ gave %+v", c)
	}
}

// denyFS is a root where some files exist but cannot be read, as
// NetworkManager's 0600 keyfiles are for a user (a test run as root
// could not make the kernel refuse).
type denyFS struct {
	fs.FS
	denied map[string]bool
}

func (d denyFS) Open(name string) (fs.File, error) {
	if d.denied[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return d.FS.Open(name)
}

// A keyfile the user cannot read is named in the notes, not guessed; the
// other files still count.
func TestReadUnreadableKeyfile(t *testing.T) {
	const kf = "etc/NetworkManager/system-connections/bond0.nmconnection"
	c := Read(denyFS{os.DirFS("testdata/nm"), map[string]bool{kf: true}})
	want := "/" + kf + ": not read (permission denied; run as root to compare the bonds with it)"
	if len(c.Notes) != 1 || c.Notes[0] != want {
		t.Errorf("notes %q, want [%q]", c.Notes, want)
	}
	if len(c.Bonds) != 1 || c.Bonds[0].Name != "bond1" {
		t.Errorf("bonds %+v, want bond1 only", c.Bonds)
	}
}

func TestCanonical(t *testing.T) {
	for _, tc := range []struct{ opt, in, want string }{
		{"mode", "4", "802.3ad"},
		{"mode", "802.3ad 4", "802.3ad"},
		{"mode", "Active-Backup", "active-backup"},
		{"xmit_hash_policy", "1", "layer3+4"},
		{"lacp_rate", "1", "fast"},
		{"arp_validate", "filter_backup", "filter_backup"},
		{"fail_over_mac", "2", "follow"},
		{"lacp_active", "on 1", "on"},
		{"all_slaves_active", "true", "1"},
		{"miimon", " 0100 ", "100"},
		{"arp_ip_target", "+10.0.0.1,10.0.0.2 10.0.0.1", "10.0.0.1 10.0.0.2"},
		{"ad_actor_system", "02:AA:BB:CC:DD:EE", "02:aa:bb:cc:dd:ee"},
	} {
		got, err := Canonical(tc.opt, tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%s, %q) = %q, %v; want %q", tc.opt, tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ opt, in string }{
		{"mode", "7"}, {"mode", "lacp"}, {"miimon", "-1"}, {"miimon", "100ms"},
		{"arp_ip_target", "fe80::1"}, {"nonsense", "1"}, {"primary", "a b"},
	} {
		if got, err := Canonical(tc.opt, tc.in); err == nil {
			t.Errorf("Canonical(%s, %q) = %q, want an error", tc.opt, tc.in, got)
		}
	}
}

// A configuration directory on the live host is root's, but a FIFO, a
// link to the zero device or a huge file there must cost a note, never a
// hang or the memory of the whole file; the good files beside them are
// read.
func TestReadHostileFiles(t *testing.T) {
	root := t.TempDir()
	dir := root + "/etc/netplan"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir+"/01-good.yaml", []byte("network:\n  bonds:\n    bond0:\n      interfaces: [eth0, eth1]\n"), 0o644)
	if err := syscall.Mkfifo(dir+"/02-fifo.yaml", 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", dir+"/03-zero.yaml")
	os.WriteFile(dir+"/04-huge.yaml", make([]byte, 2<<20), 0o644)
	done := make(chan Config, 1)
	go func() { done <- Read(os.DirFS(root)) }()
	var c Config
	select {
	case c = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("reading the configuration hangs")
	}
	if len(c.Bonds) != 1 || c.Bonds[0].Name != "bond0" || len(c.Bonds[0].Slaves) != 2 {
		t.Errorf("bonds %+v", c.Bonds)
	}
	notes := strings.Join(c.Notes, "\n")
	for _, want := range []string{"02-fifo.yaml: not read (not a regular file (a FIFO))", "03-zero.yaml: not read (not a regular file (a character device))", "04-huge.yaml: not read (over 1048576 bytes)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}
