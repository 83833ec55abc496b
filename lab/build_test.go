//go:build linux

package lab

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

func TestSelectedKernels(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want []string
	}{
		{"", KernelNames},
		{"6.12", []string{"6.12"}},
		{" 6.1, /srv/linux-image-6.6 ,", []string{"6.1", "/srv/linux-image-6.6"}},
	} {
		t.Setenv("BONDTOP_LAB_KERNEL", tc.env)
		if got := SelectedKernels(); !slices.Equal(got, tc.want) {
			t.Errorf("BONDTOP_LAB_KERNEL=%q: %q, want %q", tc.env, got, tc.want)
		}
	}
}

// fakeKernel lays out an unpacked linux-image package under dir: a
// vmlinuz and every guest module, xz-compressed when compress is set (as
// Debian ships 6.12). Each module's content is its own path.
func fakeKernel(t *testing.T, dir, release string, compress bool) {
	t.Helper()
	write := func(name string, data []byte) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("boot/vmlinuz-"+release, []byte("kernel"))
	for _, m := range guestModules {
		name := filepath.Join("lib/modules", release, "kernel", m)
		if !compress {
			write(name, []byte(m))
			continue
		}
		var buf bytes.Buffer
		zw, err := xz.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(zw, m)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		write(name+".xz", buf.Bytes())
	}
}

func TestFindKernel(t *testing.T) {
	root := t.TempDir()
	lab := filepath.Join(root, ".cache", "lab")
	fakeKernel(t, filepath.Join(lab, "linux-image-6.1.0-57-amd64"), "6.1.0-57-amd64", false)
	fakeKernel(t, filepath.Join(lab, "linux-image-6.12.117+deb12-amd64"), "6.12.117+deb12-amd64", true)
	os.Symlink("linux-image-6.1.0-57-amd64", filepath.Join(lab, "kernel-6.1"))
	os.Symlink("linux-image-6.12.117+deb12-amd64", filepath.Join(lab, "kernel-6.12"))

	for _, tc := range []struct {
		sel, name, release string
		suffix             string
	}{
		{"6.1", "6.1", "6.1.0-57-amd64", ".ko"},
		{"6.12", "6.12", "6.12.117+deb12-amd64", ".ko.xz"},
		// A tree given by path is named by its version.
		{filepath.Join(lab, "linux-image-6.12.117+deb12-amd64"), "6.12", "6.12.117+deb12-amd64", ".ko.xz"},
	} {
		k, err := FindKernel(root, tc.sel)
		if err != nil {
			t.Errorf("FindKernel(%s): %v", tc.sel, err)
			continue
		}
		if k.Name != tc.name || k.Release != tc.release {
			t.Errorf("FindKernel(%s) = name %s, release %s; want %s, %s",
				tc.sel, k.Name, k.Release, tc.name, tc.release)
		}
		if len(k.Modules) != len(guestModules) {
			t.Errorf("FindKernel(%s): %d modules, want %d", tc.sel, len(k.Modules), len(guestModules))
		}
		for _, m := range k.Modules {
			if !strings.HasSuffix(m, tc.suffix) {
				t.Errorf("FindKernel(%s): module %s, want the %s file", tc.sel, m, tc.suffix)
			}
		}
	}

	if _, err := FindKernel(root, "6.6"); err == nil || !strings.Contains(err.Error(), "kernel-6.6") {
		t.Errorf("FindKernel(6.6) without that tree: %v, want an error naming kernel-6.6", err)
	}
	os.Remove(filepath.Join(lab, "linux-image-6.1.0-57-amd64", "lib/modules/6.1.0-57-amd64/kernel/net/sched/cls_bpf.ko"))
	if _, err := FindKernel(root, "6.1"); err == nil || !strings.Contains(err.Error(), "cls_bpf") {
		t.Errorf("FindKernel(6.1) without cls_bpf: %v, want an error naming it", err)
	}
}

// TestWriteInitramfs: the archive holds /init, the modules decompressed
// under their .ko names, and every directory before what it holds.
func TestWriteInitramfs(t *testing.T) {
	root := t.TempDir()
	fakeKernel(t, filepath.Join(root, "kernel"), "6.12.117+deb12-amd64", true)
	k, err := FindKernel(root, filepath.Join(root, "kernel"))
	if err != nil {
		t.Fatal(err)
	}
	guestBin := filepath.Join(root, "guest.test")
	os.WriteFile(guestBin, []byte("guest"), 0o755)
	initrd := filepath.Join(root, "initrd.gz")
	if err := WriteInitramfs(initrd, guestBin, k); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(initrd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	archive, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	dirs := map[string]bool{".": true}
	for _, e := range readCPIO(t, archive) {
		if e.name == "TRAILER!!!" {
			continue
		}
		if !dirs[filepath.Dir(e.name)] {
			t.Errorf("%s comes before its directory", e.name)
		}
		if e.mode&cpioDir == cpioDir {
			dirs[e.name] = true
		} else {
			files[e.name] = e.data
		}
	}
	if files["init"] != "guest" {
		t.Errorf("init holds %q", files["init"])
	}
	for _, m := range guestModules {
		name := "lib/modules/" + filepath.Base(m)
		if got, ok := files[name]; !ok {
			t.Errorf("no %s in the archive", name)
		} else if got != m {
			t.Errorf("%s holds %q, want the decompressed %q", name, got, m)
		}
	}
}

// TestSharedLibraries compares what the lab packs for each judge with what
// the host's dynamic linker loads (ldd), by file name.
func TestSharedLibraries(t *testing.T) {
	judges, err := FindJudges()
	if err != nil {
		unavailable(t, err.Error())
	}
	lddLine := regexp.MustCompile(`^\s*(?:\S+ => )?(/\S+) \(0x`)
	for _, j := range judges {
		out, err := exec.Command("ldd", j).Output()
		if err != nil {
			t.Fatalf("ldd %s: %v", j, err)
		}
		var want []string
		for _, line := range strings.Split(string(out), "\n") {
			if m := lddLine.FindStringSubmatch(line); m != nil {
				want = append(want, filepath.Base(m[1]))
			}
		}
		libs, err := sharedLibraries(j)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range libs {
			got = append(got, filepath.Base(l))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: packs %q, ldd loads %q", j, got, want)
		}
	}
}
