// Package testbin is what tests that run the real bondtop binary, or
// judge with a real tool, share: the binary built once per test process,
// and the tools scripts/test-deps.sh installs, whose absence fails a test
// under CI=true and skips it elsewhere.
package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	built = map[string]string{} // package directory -> binary
)

// Build compiles the command in dir (a package directory, relative to the
// test's) once per test process and returns the binary's path.
// BONDTOP_BIN names a binary already built instead.
func Build(t testing.TB, dir string) string {
	t.Helper()
	if bin := os.Getenv("BONDTOP_BIN"); bin != "" {
		return bin
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if bin, ok := built[abs]; ok {
		return bin
	}
	tmp, err := os.MkdirTemp("", "bondtop-test-bin")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, filepath.Base(abs))
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = abs
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	built[abs] = bin
	return bin
}

// NeedTool returns the path of a tool a test judges with, looking in the
// sbin directories too (systemd-analyze, bpftool). Under CI=true its
// absence fails the test; elsewhere it skips it.
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin"} {
		if p := filepath.Join(dir, name); isFile(p) {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing (scripts/test-deps.sh installs it)", name)
	}
	t.Skipf("%s is missing: run scripts/test-deps.sh", name)
	return ""
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
