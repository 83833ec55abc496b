package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/ovs/ovslab"
)

// TestOVSBinary runs the real binary inside a private Open vSwitch's
// network namespace (ovs/ovslab): `list` and `BOND --once --json` show the
// OVS bonds, judged by ovs-appctl bond/list and bond/show.
func TestOVSBinary(t *testing.T) {
	o := ovslab.Start(t)
	bin := binary(t)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("ip", append([]string{"netns", "exec", o.NS, bin, "--ovs-rundir", o.RunDir}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bondtop %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	var list []struct {
		Name   string   `json:"name"`
		Kind   string   `json:"kind"`
		Bridge string   `json:"bridge"`
		Mode   string   `json:"mode"`
		Slaves []string `json:"slaves"`
	}
	if err := json.Unmarshal([]byte(run("list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	judge := strings.Split(strings.TrimSpace(o.Appctl("bond/list")), "\n")[1:]
	if len(list) != len(judge) {
		t.Fatalf("list has %d bonds, bond/list %d", len(list), len(judge))
	}
	for _, e := range list {
		found := false
		for _, line := range judge {
			f := strings.Split(line, "\t")
			if f[0] == e.Name {
				found = true
				if e.Kind != "ovs" || e.Mode != f[1] || len(e.Slaves) != len(strings.Split(f[3], ", ")) || e.Bridge != o.Vsctl("port-to-br", e.Name) {
					t.Errorf("list: %+v; bond/list says %q", e, line)
				}
			}
		}
		if !found {
			t.Errorf("list has %s, bond/list does not", e.Name)
		}
	}
	if text := run("list"); !strings.Contains(text, "ovs balance-tcp (br-a)") {
		t.Errorf("list table:\n%s", text)
	} else {
		t.Logf("bondtop list:\n%s", text)
	}
	t.Logf("bondtop bond-a --once:\n%s", run("bond-a", "--once"))

	var snap struct {
		Bonds []struct {
			Name        string `json:"name"`
			Kind        string `json:"kind"`
			ActiveSlave string `json:"active_slave"`
			Slaves      []struct {
				Name string `json:"name"`
				OVS  struct {
					Enabled bool `json:"enabled"`
				} `json:"ovs"`
			} `json:"slaves"`
		} `json:"bonds"`
	}
	if err := json.Unmarshal([]byte(run("ab-c", "--once", "--json")), &snap); err != nil {
		t.Fatal(err)
	}
	j := ovslab.JudgeBondShow(o.Appctl("bond/show", "ab-c"))
	if len(snap.Bonds) != 1 || snap.Bonds[0].Kind != "ovs" || snap.Bonds[0].ActiveSlave != j.Active || len(snap.Bonds[0].Slaves) != 2 {
		t.Fatalf("ab-c --once --json: %+v; ovs-appctl says active %q", snap.Bonds, j.Active)
	}
	for _, s := range snap.Bonds[0].Slaves {
		if s.OVS.Enabled != j.Enabled[s.Name] {
			t.Errorf("%s enabled %v, ovs-appctl says %v", s.Name, s.OVS.Enabled, j.Enabled[s.Name])
		}
	}

	// Diagnosis: bond-b never rebalances; one heavy flow across bond-a
	// fills one bucket (bond/show, the judge, must agree it is the top one).
	type finding struct {
		ID      string   `json:"id"`
		Slaves  []string `json:"slaves"`
		Message string   `json:"message"`
	}
	findings := func(bond string) []finding {
		var snap struct {
			Bonds []struct {
				Findings []finding `json:"findings"`
			} `json:"bonds"`
		}
		if err := json.Unmarshal([]byte(run(bond, "--once", "--json")), &snap); err != nil || len(snap.Bonds) != 1 {
			t.Fatalf("%s --once --json: %v", bond, err)
		}
		return snap.Bonds[0].Findings
	}
	has := func(fs []finding, id string) *finding {
		for i := range fs {
			if fs[i].ID == id {
				return &fs[i]
			}
		}
		return nil
	}
	if has(findings("bond-b"), "ovs-rebalance-off") == nil {
		t.Errorf("bond-b (bond-rebalance-interval=0): no ovs-rebalance-off finding")
	}
	var got *finding
	for try := 0; try < 5 && got == nil; try++ {
		o.SendUDPFlows(1, 4000)
		got = has(findings("bond-a"), "ovs-bucket-dominant")
	}
	if got == nil {
		t.Fatalf("one heavy flow: no ovs-bucket-dominant finding; bond/show:\n%s", o.Appctl("bond/show", "bond-a"))
	}
	t.Logf("finding: %s", got.Message)
	j = ovslab.JudgeBondShow(o.Appctl("bond/show", "bond-a"))
	if _, ok := j.Buckets[got.Slaves[0]]; !ok {
		t.Errorf("finding names %s; ovs-appctl shows buckets on %v", got.Slaves[0], j.Buckets)
	}
}
