package lab

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Kernel is an unpacked Debian linux-image package: the kernel to boot and
// the modules the guest loads.
type Kernel struct {
	Dir     string   // the package tree (.cache/lab/kernel)
	Image   string   // boot/vmlinuz-*
	Modules []string // .ko, maybe .ko.xz or .ko.zst
}

// guestModules are the modules the guest loads, relative to
// lib/modules/<release>/kernel, without the compression suffix: bonding
// (which needs tls), veth, and the bridge (needs llc and stp) that stands
// in for a switch, and the socket dumps (inet_diag with its TCP and UDP
// parts) that bondtop's flow table reads.
var guestModules = []string{
	"net/tls/tls.ko", "drivers/net/bonding/bonding.ko", "drivers/net/veth.ko",
	"net/llc/llc.ko", "net/802/stp.ko", "net/bridge/bridge.ko",
	"net/ipv4/inet_diag.ko", "net/ipv4/tcp_diag.ko", "net/ipv4/udp_diag.ko",
}

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

// FindKernel locates the kernel that `make lab-deps` unpacked:
// $BONDTOP_LAB_KERNEL if set, else <root>/.cache/lab/kernel.
func FindKernel(root string) (*Kernel, error) {
	dir := os.Getenv("BONDTOP_LAB_KERNEL")
	if dir == "" {
		dir = filepath.Join(root, ".cache", "lab", "kernel")
	}
	images, _ := filepath.Glob(filepath.Join(dir, "boot", "vmlinuz-*"))
	if len(images) == 0 {
		return nil, fmt.Errorf("no kernel in %s", dir)
	}
	k := &Kernel{Dir: dir, Image: images[0]}
	release := strings.TrimPrefix(filepath.Base(k.Image), "vmlinuz-")
	base := filepath.Join(dir, "lib", "modules", release, "kernel")
	for _, m := range guestModules {
		found := ""
		for _, suffix := range []string{"", ".xz", ".zst"} {
			if _, err := os.Stat(filepath.Join(base, m+suffix)); err == nil {
				found = filepath.Join(base, m+suffix)
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("kernel %s has no module %s", release, m)
		}
		k.Modules = append(k.Modules, found)
	}
	return k, nil
}

// BuildGuest compiles the guest test binary (package lab/guest) into out.
// It must be static: the initramfs holds no C library.
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
// /init, the kernel's modules in /lib/modules, where the guest's init
// looks for them by file name, and any further binaries in /bin.
func WriteInitramfs(path, guestBinary string, k *Kernel, bins ...string) error {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	w := NewCPIOWriter(zw)
	for _, d := range []string{"dev", "proc", "sys", "tmp", "run", "lib", "lib/modules", "bin"} {
		w.Dir(d, 0o755)
	}
	bin, err := os.ReadFile(guestBinary)
	if err != nil {
		return err
	}
	w.File("init", 0o755, bin)
	for _, b := range bins {
		data, err := os.ReadFile(b)
		if err != nil {
			return err
		}
		w.File("bin/"+filepath.Base(b), 0o755, data)
	}
	for _, m := range k.Modules {
		data, err := os.ReadFile(m)
		if err != nil {
			return err
		}
		w.File("lib/modules/"+filepath.Base(m), 0o644, data)
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
