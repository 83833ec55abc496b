//go:build linux

package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/live"
)

// helperEnv makes the test binary, started by TestUnprivileged as another
// user, print one live Reading as JSON instead of running tests.
const helperEnv = "BONDTOP_LAB_HELPER"

// helperOut is what the helper prints: bondtop's Reading and, for an
// independent look, the kernel's /proc/net/bonding text as this user.
type helperOut struct {
	Reading collector.Reading
	Proc    map[string]string
}

// unprivilegedRead is that helper.
func unprivilegedRead() int {
	src, err := live.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer src.Close()
	r, err := src.Read()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := helperOut{Reading: r, Proc: map[string]string{}}
	for _, b := range r.Bonds {
		text, _ := os.ReadFile("/proc/net/bonding/" + b.Name)
		out.Proc[b.Name] = string(text)
	}
	json.NewEncoder(os.Stdout).Encode(out)
	return 0
}

// rootOnly are the fields the kernel shows only to CAP_NET_ADMIN: the LACP
// system priority and MAC (procfs, sysfs and netlink) and each slave's
// actor/partner LACPDU details (procfs only has them). The active
// aggregator's details (id, ports, keys, partner MAC) are hidden in procfs
// and sysfs but not in netlink's IFLA_BOND_AD_INFO, so anyone may see them.
var rootOnly = regexp.MustCompile(`^Bonds\.\d+\.lacp\.(system_priority|system_mac)$|^Bonds\.\d+\.slaves\.\d+\.(actor|partner)\.(system_priority|system_mac|port_key|oper_key|port_priority|port_number)$`)

// TestUnprivileged: bondtop run as nobody (no CAP_NET_ADMIN) on an
// 802.3ad bond shows everything the kernel shows it, equal to what root
// sees, and leaves the root-only fields null rather than zero.
func TestUnprivileged(t *testing.T) {
	p, _ := lacpPair(t, 70, 2)

	root, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	priv, err := root.Read()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), helperEnv+"=unprivileged-read")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bondtop as nobody: %v: %s", err, stderrOf(err))
	}
	var helper helperOut
	if err := json.Unmarshal(out, &helper); err != nil {
		t.Fatalf("helper output: %v: %s", err, out)
	}
	unpriv := helper.Reading

	// The kernel's side: procfs hides the LACP details from nobody.
	rootProc := strings.Join(ProcLines(t, p.Bond), "\n")
	for _, line := range []string{"System MAC address", "Partner Mac Address", "details partner lacp pdu"} {
		if !strings.Contains(rootProc, line) {
			t.Errorf("root's /proc/net/bonding/%s lacks %q", p.Bond, line)
		}
		if strings.Contains(helper.Proc[p.Bond], line) {
			t.Errorf("nobody's /proc/net/bonding/%s shows %q", p.Bond, line)
		}
	}
	if priv.Unprivileged || !unpriv.Unprivileged {
		t.Errorf("Unprivileged: root %v, nobody %v", priv.Unprivileged, unpriv.Unprivileged)
	}
	if unpriv.Bond(p.Bond) == nil {
		t.Fatalf("nobody sees no %s", p.Bond)
	}

	a, b := flatten(t, priv), flatten(t, unpriv)
	var hidden []string
	for k, v := range a {
		if !strings.HasPrefix(k, "Bonds.") {
			continue // Unprivileged, Warnings: expected to differ
		}
		u, ok := b[k]
		switch {
		case ok && u != nil && fmt.Sprint(u) != fmt.Sprint(v):
			t.Errorf("%s: root sees %v, nobody %v", k, v, u)
		case (!ok || u == nil) && v != nil:
			hidden = append(hidden, k)
			if !rootOnly.MatchString(k) {
				t.Errorf("%s hidden from nobody (root sees %v), but the kernel shows it to everyone", k, v)
			}
		}
	}
	for k, v := range b {
		if rootOnly.MatchString(k) && v != nil {
			t.Errorf("%s = %v for nobody: the kernel hides it, so where did it come from?", k, v)
		}
	}
	sort.Strings(hidden)
	t.Logf("hidden from nobody, as the kernel wants: %v", hidden)
	for _, k := range []string{"Bonds.0.lacp.system_mac", "Bonds.0.slaves.0.partner.system_mac"} {
		if !slices.Contains(hidden, k) {
			t.Errorf("%s is not among the hidden fields", k)
		}
	}
	if l := unpriv.Bond(p.Bond).LACP; l == nil || !Is(l.PartnerMAC, p.Peer.MAC(t, "pbond0")) {
		t.Errorf("nobody's partner MAC (from netlink, which does not hide it): %+v", l)
	}
	t.Logf("warnings for nobody: %v", unpriv.Warnings)
}

// flatten maps every leaf of v's JSON form to its value, keyed by a dotted
// path (Bonds.0.slaves.1.actor.port_state).
func flatten(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	json.Unmarshal(raw, &tree)
	out := map[string]any{}
	var walk func(string, any)
	walk = func(path string, n any) {
		switch n := n.(type) {
		case map[string]any:
			for k, c := range n {
				walk(join(path, k), c)
			}
		case []any:
			for i, c := range n {
				walk(join(path, fmt.Sprint(i)), c)
			}
		default:
			out[path] = n
		}
	}
	walk("", tree)
	return out
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
