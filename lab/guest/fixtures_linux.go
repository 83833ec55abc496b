package guest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// captureFixtures asks scenarios to copy what the kernel shows of their
// bonds into FixtureDir; the host passes it for `make lab-fixtures`.
var captureFixtures = flag.Bool("lab.fixtures", false, "copy each scenario's /proc and /sys files into "+FixtureDir)

// Capture copies the kernel's files about bond and its slaves into
// FixtureDir/<test name>/, laid out as a root tree (proc/net/bonding/<bond>,
// sys/class/net/<if>/...), which the host checks in under testdata/lab. In
// sysfs each interface is a symlink into /sys/devices; in the copy it is a
// plain directory, and lower_*/upper_*/master links point at siblings.
// Without -lab.fixtures it does nothing.
func Capture(t testing.TB, bond string) {
	t.Helper()
	if !*captureFixtures {
		return
	}
	name := strings.NewReplacer("/", "_", "=", "-", "+", "").Replace(strings.TrimPrefix(t.Name(), "Test"))
	root := filepath.Join(FixtureDir, name)
	os.RemoveAll(root)
	copyFile := func(src string) {
		b, err := os.ReadFile(src)
		if err != nil {
			return // write-only or not meaningful here (EINVAL, EPERM)
		}
		dst := filepath.Join(root, src)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Errorf("fixture %s: %v", dst, err)
		}
	}
	link := func(dir, name, target string) {
		d := filepath.Join(root, "sys/class/net", dir)
		os.MkdirAll(d, 0o755)
		os.Symlink(target, filepath.Join(d, name))
	}
	copyFile("/proc/net/bonding/" + bond)
	copyFile("/proc/net/dev")
	copyFile("/proc/sys/kernel/osrelease")
	copyFile("/sys/class/net/bonding_masters")
	ifaces := []string{bond}
	if slaves, err := os.ReadFile("/sys/class/net/" + bond + "/bonding/slaves"); err == nil {
		ifaces = append(ifaces, strings.Fields(string(slaves))...)
	}
	for _, ifc := range ifaces {
		base := "/sys/class/net/" + ifc + "/"
		for _, f := range []string{"address", "mtu", "operstate", "speed", "duplex", "carrier", "ifindex", "type"} {
			copyFile(base + f)
		}
		for _, dir := range []string{"statistics", "bonding", "bonding_slave"} {
			entries, _ := os.ReadDir(base + dir)
			for _, e := range entries {
				copyFile(base + dir + "/" + e.Name())
			}
		}
		if ifc != bond {
			link(ifc, "master", "../"+bond)
			link(ifc, "upper_"+bond, "../"+bond)
			link(bond, "lower_"+ifc, "../"+ifc)
		}
	}
}
