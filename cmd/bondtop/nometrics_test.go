package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBuildWithoutMetrics builds bondtop with -tags nometrics, the lighter
// dashboard: none of the /metrics server's packages may be in it, --listen
// and --web.config.file (and --prometheus) are refused at start with the
// reason, and the rest
// works (a --once --json reading of a tree).
func TestBuildWithoutMetrics(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "nometrics", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "net/http" || pkg == "crypto/tls" || strings.HasPrefix(pkg, "github.com/prometheus/") ||
			strings.HasPrefix(pkg, "google.golang.org/protobuf") || pkg == "github.com/bondtop/bondtop/metrics" {
			t.Errorf("-tags nometrics still links %s", pkg)
		}
	}

	bin := filepath.Join(t.TempDir(), "bondtop-nometrics")
	if out, err := exec.Command("go", "build", "-tags", "nometrics", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nometrics: %v\n%s", err, out)
	}
	tree := hostTree(t)
	for _, args := range [][]string{
		{"--root", tree, "--listen", "127.0.0.1:0", "--headless"},
		{"--root", tree, "--listen", "127.0.0.1:0", "--once"},
		{"--root", tree, "--web.config.file", "/nonexistent", "--once"},
	} {
		cmd := exec.Command(bin, args...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(out), "has no /metrics server (-tags nometrics)") {
			t.Errorf("%v: exit %d (%v), want %d and the reason:\n%s", args, code, err, exitUsage, out)
		}
	}
	// The fleet view reads Prometheus over HTTP: not in this build either.
	cmd := exec.Command(bin, "--prometheus", "http://127.0.0.1:1", "--once")
	out, err = cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(out), "has no Prometheus client (-tags nometrics)") {
		t.Errorf("--prometheus: exit %d (%v), want %d and the reason:\n%s", code, err, exitUsage, out)
	}
	if out, err := exec.Command(bin, "--version").Output(); err != nil || !strings.Contains(string(out), "no /metrics server") {
		t.Errorf("--version: %v, %q does not say what the build leaves out", err, out)
	}
	out, err = exec.Command(bin, "--root", tree, "--once", "--json").Output()
	if err != nil {
		t.Fatalf("--once --json: %v\n%s", err, out)
	}
	var doc struct {
		Bonds []struct {
			Name string `json:"name"`
		} `json:"bonds"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Bonds) != 1 || doc.Bonds[0].Name != "bond0" {
		t.Errorf("--once --json: %v, %+v\n%s", err, doc, out)
	}
}

// TestDefaultBuildServesWithTheLibraries: the default build serves
// /metrics with the Prometheus Go client and the exporter toolkit, as
// every exporter does.
func TestDefaultBuildServesWithTheLibraries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	linked := strings.Fields(string(out))
	for _, want := range []string{"net/http", "crypto/tls", "github.com/bondtop/bondtop/metrics",
		"github.com/prometheus/client_golang/prometheus/promhttp", "github.com/prometheus/exporter-toolkit/web"} {
		if !slices.Contains(linked, want) {
			t.Errorf("the default build does not link %s: is /metrics still served?", want)
		}
	}
}
