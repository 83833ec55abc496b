package intent

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// needNetplan finds the real netplan (Debian's netplan.io). Under CI a
// missing netplan fails the test: scripts/test-deps.sh installs it.
func needNetplan(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"netplan", "/usr/sbin/netplan", "/sbin/netplan"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("netplan not found (scripts/test-deps.sh installs netplan.io)")
	}
	t.Skip("netplan not found; install netplan.io (scripts/test-deps.sh)")
	return ""
}

// netplanCases are YAML files as an admin writes them, each with a bond
// that exercises other parameters; the second file of a case amends the
// first, as netplan merges files in name order.
var netplanCases = map[string][]string{
	"lacp": {`network:
  version: 2
  renderer: RENDERER
  ethernets:
    eno1: {}
    eno2: {}
  bonds:
    bond0:
      interfaces: [eno1, eno2]
      mtu: 9000
      parameters:
        mode: 802.3ad
        lacp-rate: fast
        mii-monitor-interval: 100
        transmit-hash-policy: layer3+4
        ad-select: bandwidth
        min-links: 1
        up-delay: 200
        down-delay: 200
`},
	"active-backup": {`network:
  version: 2
  renderer: RENDERER
  ethernets:
    nic-a:
      match:
        macaddress: "52:54:00:00:00:01"
      set-name: ens3
    ens4: {}
  bonds:
    bond1:
      interfaces: [nic-a]
      parameters:
        mode: active-backup
        mii-monitor-interval: MIIMON
        primary: ens4
        primary-reselect-policy: better
        fail-over-mac-policy: active
        gratuitous-arp: 3
        all-slaves-active: true
`, `network:
  version: 2
  bonds:
    bond1:
      interfaces: [ens4]
      parameters:
        up-delay: 3000
`},
	"arp": {`network:
  version: 2
  renderer: RENDERER
  ethernets:
    eth0: {}
    eth1: {}
  bonds:
    bond2:
      interfaces: [eth0, eth1]
      parameters:
        mode: balance-xor
        arp-interval: 500
        arp-ip-targets: [192.0.2.1, 192.0.2.2]
        arp-all-targets: all
        transmit-hash-policy: layer2+3
`},
}

// TestNetplanGenerate proves the netplan reader on the real netplan: for
// each case and both renderers, `netplan generate --root-dir` turns the
// YAML into networkd units or NetworkManager keyfiles, and the YAML and
// what netplan generated from it must read as the same bond.
func TestNetplanGenerate(t *testing.T) {
	np := needNetplan(t)
	for name, yamls := range netplanCases {
		for _, renderer := range []string{"networkd", "NetworkManager"} {
			t.Run(name+"/"+renderer, func(t *testing.T) {
				root := t.TempDir()
				dir := filepath.Join(root, "etc/netplan")
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				for i, y := range yamls {
					f := filepath.Join(dir, []string{"01-bond.yaml", "02-more.yaml"}[i])
					// netplan copies a time with a unit ("1s") into a
					// keyfile's miimon as it is, which NetworkManager
					// refuses: the unit is tried on networkd only.
					miimon := map[string]string{"networkd": "1s", "NetworkManager": "1000"}[renderer]
					y = strings.NewReplacer("RENDERER", renderer, "MIIMON", miimon).Replace(y)
					if err := os.WriteFile(f, []byte(y), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				if out, err := exec.Command(np, "generate", "--root-dir", root).CombinedOutput(); err != nil {
					t.Fatalf("netplan generate: %v\n%s", err, out)
				}
				fromYAML := Read(os.DirFS(root))
				if len(fromYAML.Bonds) != 1 || len(fromYAML.Warnings) > 0 {
					t.Fatalf("YAML: bonds %+v, warnings %q", fromYAML.Bonds, fromYAML.Warnings)
				}
				var generated []Bond
				var warnings []string
				if renderer == "networkd" {
					files := readGenerated(t, root, "run/systemd/network", ".netdev", ".network")
					generated, warnings = ParseNetworkd(networkdOrder(files))
				} else {
					files := readGenerated(t, root, "run/NetworkManager/system-connections", ".nmconnection")
					generated, warnings = ParseNMKeyfiles(files)
				}
				if len(generated) != 1 {
					t.Fatalf("netplan's %s output: %d bonds (warnings %q)", renderer, len(generated), warnings)
				}
				for _, w := range warnings {
					// netplan writes settings of its own beside the bond's.
					t.Logf("warning on generated files: %s", w)
				}
				y, g := fromYAML.Bonds[0], generated[0]
				if y.Name != g.Name {
					t.Errorf("bond %s from YAML, %s from %s", y.Name, g.Name, renderer)
				}
				if diff := cmp.Diff(y.Options, g.Options); diff != "" {
					t.Errorf("options differ (-yaml +%s):\n%s", renderer, diff)
				}
				// Enslave order is the boot's, not the files': compare sets.
				slices.Sort(y.Slaves)
				slices.Sort(g.Slaves)
				if diff := cmp.Diff(y.Slaves, g.Slaves); diff != "" {
					t.Errorf("slaves differ (-yaml +%s):\n%s", renderer, diff)
				}
				if diff := cmp.Diff(y.MTU, g.MTU); diff != "" {
					t.Errorf("MTU differs (-yaml +%s):\n%s", renderer, diff)
				}
				if len(y.Options) == 0 || len(y.Slaves) == 0 {
					t.Errorf("YAML read as an empty bond: %+v", y)
				}
			})
		}
	}
}

func readGenerated(t *testing.T, root, dir string, suffixes ...string) []File {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		t.Fatalf("netplan generated nothing in %s: %v", dir, err)
	}
	var out []File
	for _, e := range entries {
		for _, s := range suffixes {
			if strings.HasSuffix(e.Name(), s) {
				data, err := os.ReadFile(filepath.Join(root, dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, File{Path: "/" + dir + "/" + e.Name(), Data: data})
			}
		}
	}
	return out
}

// An empty YAML value where an interface is named (a bare "-", an anchor
// with nothing after it, blanks) is a warning, never a slave without a
// name; an alias names what its anchor holds.
func TestNetplanEmptyInterfaceNames(t *testing.T) {
	y := "network:\n  bonds:\n    bond0:\n      interfaces:\n        - &a\n        - \" \"\n        - &e eth1\n        - *a\n        - *e\n        - eth/2\n      parameters:\n        primary: &p\n"
	bonds, warnings := ParseNetplan([]File{{"/etc/netplan/01.yaml", []byte(y)}})
	if len(bonds) != 1 {
		t.Fatalf("bonds %+v", bonds)
	}
	if !slices.Equal(bonds[0].Slaves, []string{"eth1"}) {
		t.Errorf("slaves %q, want [eth1]", bonds[0].Slaves)
	}
	if _, ok := bonds[0].Options["primary"]; ok {
		t.Errorf("an empty primary was kept: %q", bonds[0].Options)
	}
	// "" (once: the alias names the same), " ", "eth/2", the primary.
	if len(warnings) != 4 {
		t.Errorf("warnings %q, want 4", warnings)
	}
	checkParsed(t, bonds, "/etc/netplan/01.yaml")
}
