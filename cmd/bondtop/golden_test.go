package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// clockFields matches the wall-clock time and measured interval of a
// snapshot, which differ between runs.
var clockFields = regexp.MustCompile(`"(time|interval_s)": ("[^"]*"|[0-9.e-]+)`)

// TestGoldenOnceJSON runs `bondtop --root TREE --once --json` on a tree per
// captured /proc/net/bonding file (every real-world capture and the
// synthetic layouts) and compares the document with a reviewed golden
// file. Rates are null: the trees have no counters.
func TestGoldenOnceJSON(t *testing.T) {
	files, err := filepath.Glob("../../bonding/testdata/proc/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			proc, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			p := filepath.Join(dir, "proc/net/bonding/bond0")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, proc, 0o644); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := runBinary(t, "--root", dir, "--once", "--json", "--interval", "100ms")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !json.Valid([]byte(out)) {
				t.Fatalf("not JSON: %s", out)
			}
			got := clockFields.ReplaceAllString(out, `"$1": "X"`)
			golden := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/bondtop -run Golden -update, then review the files)", err)
			}
			if !bytes.Equal(want, []byte(got)) {
				t.Errorf("output differs from %s; got:\n%s", golden, got)
			}
		})
	}
}

// TestGoldenLabTrees runs `bondtop --root TREE --once --json` on the trees
// captured from a real kernel in the lab (testdata/lab, `make
// lab-fixtures`): procfs, sysfs and counters as Debian's kernel wrote them.
// Beside the reviewed golden file, the facts each capture was made for are
// asserted directly.
func TestGoldenLabTrees(t *testing.T) {
	trees, err := filepath.Glob("../../testdata/lab/*/proc")
	if err != nil || len(trees) == 0 {
		t.Fatalf("no lab trees: %v", err)
	}
	for _, procDir := range trees {
		dir := filepath.Dir(procDir)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, stderr, code := runBinary(t, "--root", dir, "--once", "--json", "--interval", "100ms")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var doc struct {
				Bonds    []map[string]any `json:"bonds"`
				Warnings []string         `json:"warnings"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			if len(doc.Warnings) != 0 {
				t.Errorf("warnings on a real kernel's files: %v", doc.Warnings)
			}
			if len(doc.Bonds) != 1 {
				t.Fatalf("%d bonds", len(doc.Bonds))
			}
			checkLabFacts(t, name, doc.Bonds[0])
			got := clockFields.ReplaceAllString(out, `"$1": "X"`)
			golden := filepath.Join("testdata", "golden", "lab-"+name+".json")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/bondtop -run Golden -update, then review the files)", err)
			}
			if !bytes.Equal(want, []byte(got)) {
				t.Errorf("output differs from %s; got:\n%s", golden, got)
			}
		})
	}
}

// checkLabFacts asserts what each lab capture was taken to show.
func checkLabFacts(t *testing.T, name string, b map[string]any) {
	t.Helper()
	slaves, _ := b["slaves"].([]any)
	slave := func(n string) map[string]any {
		for _, s := range slaves {
			if m := s.(map[string]any); m["name"] == n {
				return m
			}
		}
		t.Fatalf("no slave %s", n)
		return nil
	}
	state := func(s map[string]any, side string) float64 {
		p, _ := s[side].(map[string]any)
		if p == nil {
			t.Fatalf("%s: no %s", s["name"], side)
		}
		v, _ := p["port_state"].(float64)
		return v
	}
	for _, s := range slaves {
		m := s.(map[string]any)
		for _, k := range []string{"rx_bps", "tx_bps"} {
			if v, ok := m[k].(float64); !ok || v < 0 {
				t.Errorf("%s %s = %v, want a rate >= 0 (counters are in the tree)", m["name"], k, m[k])
			}
		}
	}
	if checkDriftFacts(t, name, b) {
		return
	}
	switch {
	case strings.HasPrefix(name, "LACP_slaves"):
		lacp := b["lacp"].(map[string]any)
		for _, s := range slaves {
			m := s.(map[string]any)
			if state(m, "actor") != 63 || state(m, "partner") != 63 {
				t.Errorf("%s: port states %v/%v, want 63/63", m["name"], state(m, "actor"), state(m, "partner"))
			}
			if m["aggregator_id"] != lacp["aggregator_id"] {
				t.Errorf("%s in aggregator %v, active is %v", m["name"], m["aggregator_id"], lacp["aggregator_id"])
			}
			if p := m["partner"].(map[string]any); p["system_mac"] != lacp["partner_mac"] {
				t.Errorf("%s partner %v, bond's partner %v", m["name"], p["system_mac"], lacp["partner_mac"])
			}
		}
	case name == "LACPUnpartnered":
		s := slave("dut2")
		if int(state(s, "actor"))&0x40 == 0 || s["partner"].(map[string]any)["system_mac"] != "00:00:00:00:00:00" {
			t.Errorf("dut2: actor %v, partner %v; want defaulted and no partner", state(s, "actor"), s["partner"])
		}
		if s["aggregator_id"] == b["lacp"].(map[string]any)["aggregator_id"] {
			t.Error("dut2 must sit in an aggregator of its own")
		}
	case name == "ActiveBackupFailover":
		if b["active_slave"] != "dut1" || slave("dut0")["mii_status"] != "down" || slave("dut0")["link_failure_count"] != float64(1) {
			t.Errorf("active %v, dut0 %v with %v failures", b["active_slave"], slave("dut0")["mii_status"], slave("dut0")["link_failure_count"])
		}
		if slave("dut1")["state"] != "active" || slave("dut0")["state"] != "backup" {
			t.Errorf("states %v/%v", slave("dut0")["state"], slave("dut1")["state"])
		}
	case strings.HasPrefix(name, "Modes_"):
		if mode := strings.TrimPrefix(name, "Modes_"); b["mode"] != mode || b["lacp"] != nil {
			t.Errorf("mode %v, lacp %v; want %s and null", b["mode"], b["lacp"], mode)
		}
	case strings.HasPrefix(name, "XORHash_"):
		want := map[string]string{"XORHash_layer2": "layer2", "XORHash_layer34": "layer3+4"}[name]
		if b["mode"] != "balance-xor" || b["xmit_hash_policy"] != want {
			t.Errorf("mode %v policy %v", b["mode"], b["xmit_hash_policy"])
		}
	}
}

// driftFacts are the trees with an etc/ beside a lab capture: one option
// drifted per configuration system, and the configurations that match,
// conflict or are missing. Each names what the JSON must say.
var driftFacts = map[string]struct {
	source  string // "" for none
	drift   string // "option intended running file:line", "" for none
	finding string
}{
	"Drift_netplan":          {"netplan", "mtu 9000 1500 /etc/netplan/01-bond.yaml:11", "config-drift"},
	"Drift_networkmanager":   {"networkmanager", "num_grat_arp 3 1 /etc/NetworkManager/system-connections/bond0.nmconnection:10", "config-drift"},
	"Drift_networkd":         {"networkd", "xmit_hash_policy layer2+3 layer3+4 /etc/systemd/network/10-bond0.netdev:7", "config-drift"},
	"Drift_ifcfg":            {"ifcfg", "ad_select bandwidth stable /etc/sysconfig/network-scripts/ifcfg-bond0:7", "config-drift"},
	"Drift_ifupdown":         {"ifupdown", "slaves dut0 dut1 dut2 dut0 dut1 /etc/network/interfaces:8", "config-drift"},
	"Config_netplan_matches": {"netplan", "", ""},
	"Config_conflict":        {"netplan", "", "config-conflict"},
	"Config_unknown":         {"", "", "config-unknown"},
}

// checkDriftFacts checks a drift tree's intended, drift and findings;
// false for trees that are not drift trees.
func checkDriftFacts(t *testing.T, name string, b map[string]any) bool {
	want, ok := driftFacts[name]
	if !ok {
		if b["intended"] != nil || b["drift"] != nil {
			t.Errorf("a tree without etc/: intended %v, drift %v; want null, null", b["intended"], b["drift"])
		}
		return false
	}
	intended, _ := b["intended"].(map[string]any)
	if source, _ := intended["source"].(string); source != want.source {
		t.Errorf("intended source %q, want %q", source, want.source)
	}
	drift, ok := b["drift"].([]any)
	if !ok {
		t.Fatalf("drift %v, want a list", b["drift"])
	}
	var got []string
	for _, d := range drift {
		m := d.(map[string]any)
		got = append(got, fmt.Sprintf("%s %s %s %s:%v", m["option"], m["intended"], m["running"], m["file"], m["line"]))
	}
	if w := []string{want.drift}; (want.drift == "" && len(got) != 0) || (want.drift != "" && !slices.Equal(got, w)) {
		t.Errorf("drift %q, want %q", got, want.drift)
	}
	var ids []string
	for _, f := range b["findings"].([]any) {
		ids = append(ids, f.(map[string]any)["id"].(string))
	}
	for _, id := range []string{"config-drift", "config-conflict", "config-unknown"} {
		if has := slices.Contains(ids, id); has != (id == want.finding) {
			t.Errorf("findings %v: %s present %v", ids, id, has)
		}
	}
	return true
}
