package contrib

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/internal/testbin"
)

const unitFile = "systemd/bondtop.service"

// TestUnitExposure: systemd's own judge rates the shipped unit's sandbox
// at most 3.0 ("OK").
func TestUnitExposure(t *testing.T) {
	analyze := testbin.NeedTool(t, "systemd-analyze")
	out, err := exec.Command(analyze, "security", "--offline=true", "--no-pager", unitFile).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for bondtop\.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	level, _ := strconv.ParseFloat(string(m[1]), 64)
	if level > 3.0 {
		t.Errorf("exposure %.1f, want at most 3.0:\n%s", level, out)
	}
	t.Logf("exposure level %.1f", level)
}

// TestUnitVerifies: `systemd-analyze verify` finds nothing to say about
// the unit, with its ExecStart pointing at the real binary (where the
// packages put it: /usr/bin/bondtop) and its man page where man finds it.
func TestUnitVerifies(t *testing.T) {
	analyze := testbin.NeedTool(t, "systemd-analyze")
	testbin.NeedTool(t, "man")
	dir := t.TempDir()
	unit, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "ExecStart=/usr/bin/bondtop ") {
		t.Fatal("ExecStart does not run /usr/bin/bondtop")
	}
	unit = []byte(strings.ReplaceAll(string(unit), "/usr/bin/bondtop", testbin.Build(t, "../cmd/bondtop")))
	writeFile(t, filepath.Join(dir, "bondtop.service"), string(unit))
	socket, err := os.ReadFile("systemd/bondtop.socket")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "bondtop.socket"), string(socket))
	page, err := os.ReadFile("../docs/bondtop.1")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "man/man1/bondtop.1"), string(page))
	cmd := exec.Command(analyze, "verify", filepath.Join(dir, "bondtop.socket"), filepath.Join(dir, "bondtop.service"))
	cmd.Env = append(os.Environ(), "MANPATH="+filepath.Join(dir, "man"))
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestUnitCapabilitiesExplained: every capability the unit keeps is the
// one it gives the service, and its comment says what it is for.
func TestUnitCapabilitiesExplained(t *testing.T) {
	raw, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	unit := string(raw)
	bounding := regexp.MustCompile(`(?m)^CapabilityBoundingSet=(.*)$`).FindStringSubmatch(unit)
	ambient := regexp.MustCompile(`(?m)^AmbientCapabilities=(.*)$`).FindStringSubmatch(unit)
	if bounding == nil || ambient == nil || bounding[1] != ambient[1] {
		t.Fatalf("bounding set %q, ambient %q: want the same", bounding, ambient)
	}
	for _, c := range strings.Fields(bounding[1]) {
		if !regexp.MustCompile(`(?m)^#\s+` + c + `\s+\S`).MatchString(unit) {
			t.Errorf("%s: no comment says what it is for", c)
		}
	}
	for _, want := range []string{"DynamicUser=yes", "ProtectSystem=strict", "PrivateTmp=yes", "NoNewPrivileges=yes", "SystemCallFilter=@system-service bpf"} {
		if !strings.Contains(unit, "\n"+want+"\n") {
			t.Errorf("the unit lacks %s", want)
		}
	}
}

// TestUnitCommandLine: the unit's ExecStart, with its default environment
// expanded as systemd does ($VAR: split at whitespace), is the exporter
// on :9843, and that command line runs the real binary (on a free
// loopback port instead of :9843).
func TestUnitCommandLine(t *testing.T) {
	raw, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	unit := string(raw)
	env := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^Environment=(.*)$`).FindAllStringSubmatch(unit, -1) {
		for _, kv := range regexp.MustCompile(`"([^"]*)"|(\S+)`).FindAllStringSubmatch(m[1], -1) {
			k, v, _ := strings.Cut(kv[1]+kv[2], "=")
			env[k] = v
		}
	}
	start := regexp.MustCompile(`(?m)^ExecStart=(.*)$`).FindStringSubmatch(unit)
	if start == nil {
		t.Fatal("no ExecStart")
	}
	var argv []string
	for _, w := range strings.Fields(start[1]) {
		if strings.HasPrefix(w, "$") {
			argv = append(argv, strings.Fields(env[w[1:]])...)
		} else {
			argv = append(argv, w)
		}
	}
	if got := strings.Join(argv, " "); got != "/usr/bin/bondtop --headless --listen :9843" {
		t.Fatalf("the unit runs %q", got)
	}
	e := startExporter(t, "--root", "../testdata/lab/LACP_slaves-2")
	if s, err := scrapeOnce(e.addr); err != nil || s["bondtop_bonds"] != 1 {
		t.Errorf("bondtop --headless --listen: bondtop_bonds %v, %v", s["bondtop_bonds"], err)
	}
}
