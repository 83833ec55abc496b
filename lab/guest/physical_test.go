//go:build linux

package guest

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ethtoolSays runs the judge ethtool (lab.Judges) and returns its output
// and whether it succeeded: a driver that lacks FEC or a module makes it
// fail, which is what the test compares with.
func ethtoolSays(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	out, err := exec.Command("/bin/ethtool", args...).CombinedOutput()
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatalf("ethtool %s: %v", strings.Join(args, " "), err)
	}
	return string(out), err == nil
}

var ethtoolLinkDetected = regexp.MustCompile(`(?m)^\s*Link detected: (yes|no)`)

// TestPhysical: the physical layer of a real bond's slaves (veth under
// the real bonding driver) against Debian's ethtool: the link as "Link
// detected" says, before and after the far end goes down; FEC and module
// absent exactly where `ethtool --show-fec` and `ethtool -m` say not
// supported — in the sampler's snapshot and in the real binary's JSON.
func TestPhysical(t *testing.T) {
	p := NewPair(t, 98, 2)
	p.Root.Bond(t, p.Bond, BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer2", MIIMon: 100}, p.Slaves...)
	bt := analyzedBondtop(t, p.Bond)

	check := func(slave string) (detected string, ok bool) {
		b := BondIn(t, bt.Sample(t), p.Bond)
		s := SlaveIn(t, b, slave)
		out, _ := ethtoolSays(t, slave)
		m := ethtoolLinkDetected.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("ethtool %s prints no Link detected:\n%s", slave, out)
		}
		if s.Physical == nil || s.LinkState == nil || s.LinkState.Detected == nil {
			return "", false
		}
		got := map[bool]string{true: "yes", false: "no"}[*s.LinkState.Detected]
		fecOut, fecOK := ethtoolSays(t, "--show-fec", slave)
		modOut, modOK := ethtoolSays(t, "-m", slave)
		if fecOK || !strings.Contains(fecOut, "not supported") || modOK || !strings.Contains(modOut, "not supported") {
			t.Errorf("%s: ethtool --show-fec ok=%v %q, -m ok=%v %q: expected not supported on veth", slave, fecOK, fecOut, modOK, modOut)
		}
		if (s.FEC != nil) != fecOK || (s.Module != nil) != modOK {
			t.Errorf("%s: bondtop FEC %+v module %+v, ethtool FEC ok=%v module ok=%v", slave, s.FEC, s.Module, fecOK, modOK)
		}
		return got + "/" + m[1], got == m[1]
	}
	for _, s := range p.Slaves {
		if both, ok := check(s); !ok {
			t.Errorf("%s link detected bondtop/ethtool = %s", s, both)
		}
	}

	// The far end of the first slave goes down: ethtool says no, and
	// bondtop follows within a few samples (a MII change re-reads the
	// link state without waiting for the 10 s interval).
	p.Peer.Down(t, p.Far[0])
	start := time.Now()
	Eventually(t, 5*time.Second, p.Slaves[0]+" link detected: no in bondtop and ethtool", func() (bool, string) {
		both, ok := check(p.Slaves[0])
		return ok && strings.HasPrefix(both, "no/"), both
	})
	Measure(t, "physical_link_state_latency", time.Since(start).Seconds(), "s")

	// What a read of one slave's physical layer costs (three ethtool
	// requests on veth: link state, FEC and the module, both refused).
	var costs []float64
	for range 21 {
		t0 := time.Now()
		bt.Src.Physical(p.Slaves[1])
		costs = append(costs, float64(time.Since(t0).Microseconds()))
	}
	slices.Sort(costs)
	Measure(t, "physical_read_per_slave[veth,median]", costs[len(costs)/2], "us")

	// The real binary's JSON, as root and as nobody: link_state per
	// slave, no fec or module key; nobody is told that the module needs
	// CAP_NET_ADMIN (ethtool -m as nobody is refused too).
	for _, asNobody := range []bool{false, true} {
		cmd := exec.Command(bondtopBin, "--once", "--json", p.Bond)
		if asNobody {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bondtop --once --json (nobody %v): %v", asNobody, err)
		}
		var doc struct {
			Bonds []struct {
				Slaves []map[string]json.RawMessage `json:"slaves"`
			} `json:"bonds"`
			Notes []string `json:"notes"`
		}
		if err := json.Unmarshal(out, &doc); err != nil || len(doc.Bonds) != 1 {
			t.Fatalf("JSON: %v (%d bonds)", err, len(doc.Bonds))
		}
		for _, s := range doc.Bonds[0].Slaves {
			if _, ok := s["link_state"]; !ok {
				t.Errorf("slave %s (nobody %v): no link_state in JSON", s["name"], asNobody)
			}
			for _, k := range []string{"fec", "module"} {
				if v, ok := s[k]; ok {
					t.Errorf("slave %s (nobody %v): %s = %s on veth", s["name"], asNobody, k, v)
				}
			}
		}
		noted := slices.ContainsFunc(doc.Notes, func(n string) bool { return strings.Contains(n, "module diagnostics") })
		if noted != asNobody {
			t.Errorf("nobody %v: module note %v in %q", asNobody, noted, doc.Notes)
		}
	}
}
