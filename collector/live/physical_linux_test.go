package live

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/model"
	"github.com/vishvananda/netlink"
)

// ethtoolCmd finds Debian's ethtool, the judge of what a driver reports
// (scripts/test-deps.sh installs it); under CI=true its absence fails.
func ethtoolCmd(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"ethtool", "/usr/sbin/ethtool", "/sbin/ethtool"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("ethtool not installed (scripts/test-deps.sh installs it)")
	}
	t.Skip("ethtool not installed (scripts/test-deps.sh installs it)")
	return ""
}

// runEthtool runs the real ethtool in the test's network namespace (the
// child inherits the locked thread's namespace) and returns its output
// and whether it succeeded.
func runEthtool(t *testing.T, bin string, args ...string) (string, bool) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatalf("ethtool %v: %v", args, err)
	}
	return string(out), err == nil
}

var linkDetected = regexp.MustCompile(`(?m)^\s*Link detected: (yes|no)`)

// TestPhysicalVethAgainstEthtool: on a veth (no FEC, no module) bondtop
// reports exactly what the real ethtool reports: the link as "Link
// detected" says, up and down; FEC and module absent where `ethtool
// --show-fec` and `ethtool -m` fail as not supported — and nothing else.
func TestPhysicalVethAgainstEthtool(t *testing.T) {
	bin := ethtoolCmd(t)
	inNewNetns(t)
	_, peer := addVeth(t, "phy0", "phy1", 1500)
	s := newTestLive(t)
	if s.phys == nil {
		t.Fatal("no ethtool generic netlink family on this kernel")
	}
	for _, up := range []bool{true, false} {
		if !up {
			if err := netlink.LinkSetDown(peer); err != nil {
				t.Fatal(err)
			}
			waitOperState(t, "phy0", netlink.OperLowerLayerDown)
		}
		p, needRoot := s.Physical("phy0")
		if needRoot {
			t.Errorf("needRoot as root")
		}
		out, _ := runEthtool(t, bin, "phy0")
		m := linkDetected.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("ethtool phy0 printed no Link detected line:\n%s", out)
		}
		if p == nil || p.LinkState == nil || p.LinkState.Detected == nil {
			t.Fatalf("bondtop has no link state where ethtool says %q", m[1])
		}
		if got := map[bool]string{true: "yes", false: "no"}[*p.LinkState.Detected]; got != m[1] {
			t.Errorf("link detected: bondtop %s, ethtool %s", got, m[1])
		}
		fecOut, fecOK := runEthtool(t, bin, "--show-fec", "phy0")
		if fecOK || !strings.Contains(fecOut, "not supported") {
			t.Errorf("ethtool --show-fec on veth: ok=%v %q (expected not supported)", fecOK, fecOut)
		}
		if (p.FEC != nil) != fecOK {
			t.Errorf("FEC: bondtop %+v, ethtool ok=%v", p.FEC, fecOK)
		}
		modOut, modOK := runEthtool(t, bin, "-m", "phy0")
		if modOK || !strings.Contains(modOut, "not supported") {
			t.Errorf("ethtool -m on veth: ok=%v %q (expected not supported)", modOK, modOut)
		}
		if (p.Module != nil) != modOK {
			t.Errorf("module: bondtop %+v, ethtool ok=%v", p.Module, modOK)
		}
		b, _ := json.Marshal(p)
		for _, k := range []string{`"fec"`, `"module"`, `"ext_state"`} {
			if strings.Contains(string(b), k) {
				t.Errorf("JSON of a veth has %s: %s", k, b)
			}
		}
	}
}

// BenchmarkPhysicalRead: one slave's physical layer on a veth (link
// state, then FEC and the module, both refused by the driver): the cost
// of a read every DefaultPhysicalInterval per slave.
func BenchmarkPhysicalRead(b *testing.B) {
	inNewNetns(b)
	addVeth(b, "phy0", "phy1", 1500)
	p, err := openPhysConn()
	if err != nil {
		b.Skipf("no ethtool netlink family: %v", err)
	}
	defer p.close()
	b.ReportAllocs()
	for b.Loop() {
		if ph, _ := p.read("phy0"); ph == nil || ph.LinkState == nil {
			b.Fatal("no link state")
		}
	}
}

var (
	ethtoolFECConfigured = regexp.MustCompile(`(?m)^(?:Supported/)?Configured FEC encodings:\s*(.*)$`)
	ethtoolFECActive     = regexp.MustCompile(`(?m)^Active FEC encoding:\s*(.*)$`)
	ethtoolVendorName    = regexp.MustCompile(`(?m)^\s*Vendor name\s*:\s*(.*?)\s*$`)
)

// TestPhysicalHostAgainstEthtool: every interface of the machine the
// tests run on (virtio_net, loopback, ifb on the build machines; real
// NICs with optics elsewhere), read only: bondtop's link state, FEC and
// module against what Debian's ethtool prints for the same interface.
func TestPhysicalHostAgainstEthtool(t *testing.T) {
	bin := ethtoolCmd(t)
	p, err := openPhysConn()
	if err != nil {
		t.Fatalf("ethtool netlink family: %v", err)
	}
	defer p.close()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifi := range ifaces {
		ph, _ := p.read(ifi.Name)
		if ph == nil {
			ph = &model.Physical{}
		}
		out, _ := runEthtool(t, bin, ifi.Name)
		m := linkDetected.FindStringSubmatch(out)
		switch {
		case m == nil && ph.LinkState != nil && ph.LinkState.Detected != nil:
			t.Errorf("%s: bondtop link detected %v, ethtool prints none", ifi.Name, *ph.LinkState.Detected)
		case m != nil && (ph.LinkState == nil || ph.LinkState.Detected == nil):
			t.Errorf("%s: ethtool says link detected %s, bondtop has none", ifi.Name, m[1])
		case m != nil && map[bool]string{true: "yes", false: "no"}[*ph.LinkState.Detected] != m[1]:
			t.Errorf("%s: link detected bondtop %v, ethtool %s", ifi.Name, *ph.LinkState.Detected, m[1])
		}
		fecOut, fecOK := runEthtool(t, bin, "--show-fec", ifi.Name)
		if (ph.FEC != nil) != fecOK {
			t.Errorf("%s: bondtop FEC %+v, ethtool --show-fec ok=%v %q", ifi.Name, ph.FEC, fecOK, fecOut)
		}
		if fecOK && ph.FEC != nil {
			if c := ethtoolFECConfigured.FindStringSubmatch(fecOut); c != nil && strings.Join(strings.Fields(c[1]), " ") != strings.Join(ph.FEC.Configured, " ") {
				t.Errorf("%s: FEC configured bondtop %v, ethtool %q", ifi.Name, ph.FEC.Configured, c[1])
			}
			if a := ethtoolFECActive.FindStringSubmatch(fecOut); a != nil && strings.TrimSpace(a[1]) != ph.FEC.Active {
				t.Errorf("%s: FEC active bondtop %q, ethtool %q", ifi.Name, ph.FEC.Active, a[1])
			}
		}
		modOut, modOK := runEthtool(t, bin, "-m", ifi.Name)
		if (ph.Module != nil) != modOK {
			t.Errorf("%s: bondtop module %+v, ethtool -m ok=%v %q", ifi.Name, ph.Module, modOK, modOut)
		}
		if modOK && ph.Module != nil {
			if v := ethtoolVendorName.FindStringSubmatch(modOut); v != nil && v[1] != ph.Module.Vendor {
				t.Errorf("%s: module vendor bondtop %q, ethtool %q", ifi.Name, ph.Module.Vendor, v[1])
			}
		}
		t.Logf("%s: ethtool link detected %q, --show-fec ok=%v, -m ok=%v; bondtop agrees", ifi.Name, strings.Join(m, "")[len(strings.Join(m, ""))-len(strings.Join(m[min(1, len(m)):], "")):], fecOK, modOK)
	}
}
