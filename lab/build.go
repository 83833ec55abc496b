package lab

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/ulikunitz/xz"
)

// KernelNames are the kernels the lab boots, by the names lab-deps.sh gives
// their trees (.cache/lab/kernel-<name>): Debian bookworm's own 6.1 and the
// 6.12 it offers beside it, so every scenario runs on both sides of the
// kernel changes bondtop cares about (TCX from 6.6, for one).
var KernelNames = []string{"6.1", "6.12"}

// Kernel is an unpacked Debian linux-image package: the kernel to boot and
// the modules the guest loads.
type Kernel struct {
	Name    string // "6.1", "6.12": its KernelNames entry, or major.minor for a tree given by path
	Dir     string // the package tree (.cache/lab/kernel-6.1)
	Image   string // boot/vmlinuz-*
	Release string // "6.12.117+deb12-amd64"
	Version bonding.KernelVersion
	Modules []string // .ko, or .ko.xz that WriteInitramfs decompresses
}

// guestModules are the modules the guest loads, relative to
// lib/modules/<release>/kernel, without the compression suffix: bonding
// (which needs tls), veth, the clsact qdisc and BPF classifier that eBPF at
// TC needs, the bridge (needs llc and stp) that stands in for a switch, and
// the socket dumps (inet_diag with its TCP and UDP parts) that bondtop's
// flow table reads. The guest's init loads them in its own order.
var guestModules = []string{
	"net/tls/tls.ko", "drivers/net/bonding/bonding.ko", "drivers/net/veth.ko",
	"net/sched/sch_ingress.ko", "net/sched/cls_bpf.ko",
	"net/llc/llc.ko", "net/802/stp.ko", "net/bridge/bridge.ko",
	"net/ipv4/inet_diag.ko", "net/ipv4/tcp_diag.ko", "net/ipv4/udp_diag.ko",
}

// Judges are the host tools the lab packs into the guest for tests to
// compare bondtop against (iproute2's tc for clsact filters, bpftool for
// programs and maps, ethtool for the physical layer); bondtop itself never
// runs them. lab-deps.sh installs them.
var Judges = []string{"tc", "bpftool", "ethtool"}

// ModuleRoot returns the directory of bondtop's go.mod.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the bondtop module")
	}
	return filepath.Dir(mod), nil
}

// SelectedKernels returns the kernels to boot: the comma-separated entries
// of $BONDTOP_LAB_KERNEL (names such as 6.12, or paths of unpacked kernel
// trees), else every one of KernelNames.
func SelectedKernels() []string {
	var out []string
	for _, s := range strings.Split(os.Getenv("BONDTOP_LAB_KERNEL"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return slices.Clone(KernelNames)
	}
	return out
}

// FindKernel locates a kernel that `make lab-deps` unpacked: sel is a name
// (6.1 is <root>/.cache/lab/kernel-6.1) or, holding a slash, the path of an
// unpacked linux-image package.
func FindKernel(root, sel string) (*Kernel, error) {
	dir, name := sel, ""
	if !strings.ContainsRune(sel, filepath.Separator) {
		dir, name = filepath.Join(root, ".cache", "lab", "kernel-"+sel), sel
	}
	images, _ := filepath.Glob(filepath.Join(dir, "boot", "vmlinuz-*"))
	if len(images) == 0 {
		return nil, fmt.Errorf("no kernel %s in %s", sel, dir)
	}
	k := &Kernel{Name: name, Dir: dir, Image: images[0]}
	k.Release = strings.TrimPrefix(filepath.Base(k.Image), "vmlinuz-")
	v, err := bonding.ParseKernelVersion(k.Release)
	if err != nil {
		return nil, fmt.Errorf("kernel in %s: %w", dir, err)
	}
	k.Version = v
	if k.Name == "" {
		k.Name = fmt.Sprintf("%d.%d", v.Major, v.Minor)
	}
	base := filepath.Join(dir, "lib", "modules", k.Release, "kernel")
	for _, m := range guestModules {
		found := ""
		for _, suffix := range []string{"", ".xz"} {
			if _, err := os.Stat(filepath.Join(base, m+suffix)); err == nil {
				found = filepath.Join(base, m+suffix)
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("kernel %s has no module %s", k.Release, m)
		}
		k.Modules = append(k.Modules, found)
	}
	return k, nil
}

// FindJudges returns the host paths of Judges, looked up on PATH and in the
// sbin directories a non-root PATH may lack.
func FindJudges() ([]string, error) {
	var paths, missing []string
	for _, j := range Judges {
		p, err := exec.LookPath(j)
		for _, dir := range []string{"/usr/sbin", "/sbin"} {
			if err == nil {
				break
			}
			p, err = exec.LookPath(filepath.Join(dir, j))
		}
		if err != nil {
			missing = append(missing, j)
			continue
		}
		paths = append(paths, p)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("judge tools not installed: %s", strings.Join(missing, ", "))
	}
	return paths, nil
}

// BuildGuest compiles the guest test binary (package lab/guest) into out.
// It must be static: the initramfs holds no C library for it.
func BuildGuest(root, out string) error {
	cmd := exec.Command("go", "test", "-c", "-o", out, "./lab/guest")
	cmd.Dir = root
	// GOFLAGS is cleared because a -race there (go test -race ./...)
	// cannot build with CGO_ENABLED=0.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the guest binary: %w\n%s", err, msg)
	}
	return nil
}

// BuildBondtop compiles the bondtop command into out, static like the
// guest binary: the guest runs it as a user would (bondtop hash).
func BuildBondtop(root, out string) error {
	cmd := exec.Command("go", "build", "-o", out, "./cmd/bondtop")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building bondtop for the guest: %w\n%s", err, msg)
	}
	return nil
}

// WriteInitramfs writes a gzipped newc archive to path: the guest binary as
// /init; the kernel's modules, decompressed, in /lib/modules, where the
// guest's init looks for them by file name; and further binaries in /bin.
// A dynamically linked binary (a judge) brings its ELF interpreter and
// shared libraries along, each at the path it has on the host, where the
// interpreter's default search finds it.
func WriteInitramfs(path, guestBinary string, k *Kernel, bins ...string) error {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	w := NewCPIOWriter(zw)
	made := map[string]bool{}
	mkdirAll := func(dir string) {
		var parts []string
		for d := dir; d != "." && d != "/" && !made[d]; d = filepath.Dir(d) {
			parts = append(parts, d)
		}
		for _, d := range slices.Backward(parts) {
			w.Dir(d, 0o755)
			made[d] = true
		}
	}
	for _, d := range []string{"dev", "proc", "sys", "tmp", "run", "lib/modules", "bin"} {
		mkdirAll(d)
	}
	add := func(name string, perm uint32, data []byte) {
		mkdirAll(filepath.Dir(name))
		w.File(name, perm, data)
	}
	bin, err := os.ReadFile(guestBinary)
	if err != nil {
		return err
	}
	add("init", 0o755, bin)
	libs := map[string]bool{}
	for _, b := range bins {
		data, err := os.ReadFile(b)
		if err != nil {
			return err
		}
		add("bin/"+filepath.Base(b), 0o755, data)
		deps, err := sharedLibraries(b)
		if err != nil {
			return err
		}
		for _, d := range deps {
			libs[d] = true
		}
	}
	for _, lib := range slices.Sorted(maps.Keys(libs)) {
		data, err := os.ReadFile(lib) // through symbolic links: the archive holds files only
		if err != nil {
			return err
		}
		add(strings.TrimPrefix(lib, "/"), 0o755, data)
	}
	for _, m := range k.Modules {
		data, err := readModule(m)
		if err != nil {
			return err
		}
		add("lib/modules/"+strings.TrimSuffix(filepath.Base(m), ".xz"), 0o644, data)
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// readModule returns a module's ELF image, decompressing a .ko.xz (Debian
// compresses modules from 6.12 on): the guest then loads plain .ko files
// and needs nothing from the kernel's own module decompressor.
func readModule(path string) ([]byte, error) {
	if !strings.HasSuffix(path, ".xz") {
		return os.ReadFile(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := xz.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", path, err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", path, err)
	}
	return data, nil
}

// libraryDirs are where the host's dynamic linker finds libraries (Debian's
// multiarch directories first), searched in this order for DT_NEEDED names.
var libraryDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
}

// sharedLibraries returns the host paths of what a dynamically linked ELF
// binary needs to run: its interpreter (PT_INTERP) and, transitively, the
// libraries its DT_NEEDED entries name. A static binary needs nothing.
func sharedLibraries(bin string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	var visit func(path string, root bool) error
	visit = func(path string, root bool) error {
		f, err := elf.Open(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer f.Close()
		if root {
			for _, p := range f.Progs {
				if p.Type != elf.PT_INTERP {
					continue
				}
				b, err := io.ReadAll(p.Open())
				if err != nil {
					return fmt.Errorf("%s: interpreter: %w", path, err)
				}
				interp := strings.TrimRight(string(b), "\x00")
				seen[filepath.Base(interp)] = true
				out = append(out, interp)
			}
		}
		needed, err := f.ImportedLibraries()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, name := range needed {
			if seen[name] {
				continue
			}
			seen[name] = true
			lib := ""
			for _, dir := range libraryDirs {
				if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
					lib = filepath.Join(dir, name)
					break
				}
			}
			if lib == "" {
				return fmt.Errorf("%s needs %s, found in none of %s", bin, name, strings.Join(libraryDirs, " "))
			}
			out = append(out, lib)
			if err := visit(lib, false); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(bin, true); err != nil {
		return nil, err
	}
	return out, nil
}
