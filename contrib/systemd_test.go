package contrib

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const unitFile = "systemd/bondtop.service"

// TestUnitExposure: systemd's own judge rates the shipped unit's sandbox
// at most 3.0 ("OK").
func TestUnitExposure(t *testing.T) {
	analyze := needTool(t, "systemd-analyze")
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
	analyze := needTool(t, "systemd-analyze")
	needTool(t, "man")
	dir := t.TempDir()
	unit, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "ExecStart=/usr/bin/bondtop ") {
		t.Fatal("ExecStart does not run /usr/bin/bondtop")
	}
	unit = []byte(strings.ReplaceAll(string(unit), "/usr/bin/bondtop", bondtopBinary(t)))
	writeFile(t, filepath.Join(dir, "bondtop.service"), string(unit))
	page, err := os.ReadFile("../docs/bondtop.1")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "man/man1/bondtop.1"), string(page))
	cmd := exec.Command(analyze, "verify", filepath.Join(dir, "bondtop.service"))
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
