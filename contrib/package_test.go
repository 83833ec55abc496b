package contrib

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/internal/testbin"
)

// buildPackages runs the packager (scripts/package, nfpm as a library)
// as `make package` does, for this machine's architecture only, and
// returns the .deb and the .rpm.
func buildPackages(t *testing.T) (deb, rpm string) {
	t.Helper()
	out := t.TempDir()
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", ".", "-repo", repo, "-out", out, "-version", "1.2.3-4-gabc1234", "-bin", runtime.GOARCH+"="+testbin.Build(t, "../cmd/bondtop"))
	cmd.Dir = "../scripts/package"
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/package: %v\n%s", err, b)
	}
	debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
	rpms, _ := filepath.Glob(filepath.Join(out, "*.rpm"))
	if len(debs) != 1 || len(rpms) != 1 {
		t.Fatalf("want one .deb and one .rpm, have %v %v", debs, rpms)
	}
	return debs[0], rpms[0]
}

// packaged is what both packages must hold, with the Debian and RPM
// places where they differ.
var packaged = []struct{ deb, rpm string }{
	{"/usr/bin/bondtop", ""},
	{"/lib/systemd/system/bondtop.service", "/usr/lib/systemd/system/bondtop.service"},
	{"/lib/systemd/system/bondtop.socket", "/usr/lib/systemd/system/bondtop.socket"},
	{"/etc/default/bondtop", "/etc/sysconfig/bondtop"},
	{"/usr/share/man/man1/bondtop.1.gz", ""},
	{"/usr/share/bash-completion/completions/bondtop", ""},
	{"/usr/share/zsh/vendor-completions/_bondtop", "/usr/share/zsh/site-functions/_bondtop"},
	{"/usr/share/fish/vendor_completions.d/bondtop.fish", ""},
	{"/usr/share/bondtop/prometheus/bondtop.rules.yml", ""},
	{"/usr/share/bondtop/grafana/bondtop.json", ""},
}

// TestDebInstallsAndRuns unpacks the .deb as dpkg would install it
// (dpkg-deb -x), checks each file is where Debian looks for it, and runs
// the binary it holds: the exporter on a real-kernel tree.
func TestDebInstallsAndRuns(t *testing.T) {
	dpkgDeb := testbin.NeedTool(t, "dpkg-deb")
	deb, _ := buildPackages(t)
	info, err := exec.Command(dpkgDeb, "-I", deb).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb -I: %v\n%s", err, info)
	}
	for _, want := range []string{"Package: bondtop", "Version: 1.2.3+4.gabc1234-1", "Architecture: " + runtime.GOARCH, "conffiles"} {
		if !strings.Contains(string(info), want) {
			t.Errorf("dpkg-deb -I lacks %q:\n%s", want, info)
		}
	}
	root := t.TempDir()
	if b, err := exec.Command(dpkgDeb, "-x", deb, root).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x: %v\n%s", err, b)
	}
	for _, p := range packaged {
		st, err := os.Stat(filepath.Join(root, p.deb))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p.deb, err)
		}
	}
	checkInstalled(t, root)
}

// checkInstalled runs what a package put under root: the binary, its man
// page, its completions.
func checkInstalled(t *testing.T, root string) {
	t.Helper()
	bin := filepath.Join(root, "usr/bin/bondtop")
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "bondtop ") {
		t.Errorf("bondtop --version: %v %q", err, out)
	}
	f, err := os.Open(filepath.Join(root, "usr/share/man/man1/bondtop.1.gz"))
	if err == nil {
		zr, zerr := gzip.NewReader(f)
		if zerr != nil {
			t.Errorf("man page: %v", zerr)
		} else if page, _ := io.ReadAll(zr); !bytes.Contains(page, []byte(".TH")) {
			t.Errorf("man page: no .TH in %.80q", page)
		}
		f.Close()
	}
	for _, c := range []string{"usr/share/bash-completion/completions/bondtop", "usr/share/fish/vendor_completions.d/bondtop.fish"} {
		if b, err := os.ReadFile(filepath.Join(root, c)); err != nil || !bytes.Contains(b, []byte("headless")) {
			t.Errorf("%s: %v, or it completes no headless flag", c, err)
		}
	}
	// The packaged binary as the unit runs it, on a real-kernel tree.
	t.Setenv("BONDTOP_BIN", bin)
	e := startExporter(t, "--root", "../testdata/lab/LACP_slaves-2", "--interval", "200ms")
	s, err := scrapeOnce(e.addr)
	if err != nil || s["bondtop_bonds"] != 1 {
		t.Errorf("the packaged exporter on LACP_slaves-2: bondtop_bonds %v, %v", s["bondtop_bonds"], err)
	}
}

// TestRPMHoldsAndInstalls: rpm reads the .rpm (its files where Fedora and
// RHEL look for them, its scripts) and installs it into a scratch root,
// whose binary runs.
func TestRPMHoldsAndInstalls(t *testing.T) {
	rpmTool := testbin.NeedTool(t, "rpm")
	_, rpm := buildPackages(t)
	list, err := exec.Command(rpmTool, "-qpl", rpm).CombinedOutput()
	if err != nil {
		t.Fatalf("rpm -qpl: %v\n%s", err, list)
	}
	for _, p := range packaged {
		want := p.rpm
		if want == "" {
			want = p.deb
		}
		if !strings.Contains(string(list), want+"\n") {
			t.Errorf("rpm -qpl lacks %s:\n%s", want, list)
		}
	}
	scripts, err := exec.Command(rpmTool, "-qp", "--scripts", rpm).CombinedOutput()
	if err != nil || !strings.Contains(string(scripts), "disable --now bondtop.service") {
		t.Errorf("rpm -qp --scripts: %v\n%s", err, scripts)
	}
	root := t.TempDir()
	for _, args := range [][]string{
		{"--root", root, "--initdb"},
		{"--root", root, "--nodeps", "--noscripts", "-i", rpm},
	} {
		if b, err := exec.Command(rpmTool, args...).CombinedOutput(); err != nil {
			t.Fatalf("rpm %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	checkInstalled(t, root)
}
