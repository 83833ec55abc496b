package guest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Env tells a test binary that it runs inside the lab VM, started by Init.
const Env = "BONDTOP_LAB_GUEST"

// FixtureDir is where scenarios leave fixture trees (make lab-fixtures);
// Init sends whatever it holds to the host once the tests are done.
const FixtureDir = "/tmp/lab-fixtures"

// InVM reports whether this process runs in the lab VM as a test binary.
func InVM() bool { return os.Getenv(Env) != "" }

// Init is the VM's pid 1. It prepares the machine, runs this same binary
// again as a test binary (its arguments, from the kernel command line after
// "--", are passed on), reports on the second serial port and powers off.
// It never returns: pid 1 exiting would panic the kernel.
func Init() {
	// Until the report port is open, only the console (the kernel's
	// stdout for init) can say what went wrong.
	if err := mountAll(); err != nil {
		fmt.Println("bondtop-lab:", err)
		powerOff()
	}
	report, err := os.OpenFile("/dev/ttyS1", os.O_WRONLY, 0)
	if err != nil {
		fmt.Println("bondtop-lab: no report port:", err)
		powerOff()
	}
	say := func(format string, args ...any) {
		fmt.Fprintf(report, "bondtop-lab: "+format+"\n", args...)
	}
	if err := setup(report); err != nil {
		say("error %v", err)
		powerOff()
	}
	var uts unix.Utsname
	unix.Uname(&uts)
	say("init %s", unix.ByteSliceToString(uts.Release[:]))

	cmd := exec.Command("/init", append([]string{"-test.v=test2json"}, os.Args[1:]...)...)
	cmd.Env = []string{Env + "=1", "HOME=/tmp", "TMPDIR=/tmp", "PATH=/"}
	cmd.Stdout, cmd.Stderr = report, report
	status := "0"
	if err := cmd.Run(); err != nil {
		status = err.Error()
	}
	if err := sendFixtures(report); err != nil {
		say("error sending fixtures: %v", err)
	}
	say("exit %s", status)
	powerOff()
}

// mountAll mounts the pseudo file systems on the initramfs' directories.
func mountAll() error {
	// The mount points exist in the initramfs; devtmpfs is mounted by the
	// kernel already when CONFIG_DEVTMPFS_MOUNT is set, hence EBUSY is fine.
	for _, m := range []struct{ src, dir, fstype string }{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"devtmpfs", "/dev", "devtmpfs"},
		{"tmpfs", "/tmp", "tmpfs"},
		{"tmpfs", "/run", "tmpfs"},
	} {
		if err := unix.Mount(m.src, m.dir, m.fstype, 0, ""); err != nil && !errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("mount %s: %w", m.dir, err)
		}
	}
	return nil
}

// setup makes the report port raw, loads the modules and brings up the
// loopback interface.
func setup(report *os.File) error {
	// A raw report port: no \n -> \r\n translation.
	if tio, err := unix.IoctlGetTermios(int(report.Fd()), unix.TCGETS); err == nil {
		tio.Oflag &^= unix.OPOST
		unix.IoctlSetTermios(int(report.Fd()), unix.TCSETS, tio)
	}
	// Dependencies first: tls for bonding; the clsact qdisc (sch_ingress)
	// and the BPF classifier that eBPF at TC needs; llc and stp for the
	// bridge; inet_diag for the TCP and UDP socket dumps (the flow table).
	// Without modprobe in the VM the kernel cannot load them on demand.
	// max_bonds=0, or the driver creates a bond0 of its own.
	for _, m := range []struct{ name, params string }{
		{"tls", ""}, {"bonding", "max_bonds=0"}, {"veth", ""},
		{"sch_ingress", ""}, {"cls_bpf", ""},
		{"llc", ""}, {"stp", ""}, {"bridge", ""},
		{"inet_diag", ""}, {"tcp_diag", ""}, {"udp_diag", ""},
	} {
		if err := loadModule(m.name, m.params); err != nil {
			return err
		}
	}
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return err
	}
	return netlink.LinkSetUp(lo)
}

// loadModule loads /lib/modules/<name>.ko, which the host packed
// decompressed.
func loadModule(name, params string) error {
	path := "/lib/modules/" + name + ".ko"
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("module %s is not in the initramfs: %w", name, err)
	}
	defer f.Close()
	if err := unix.FinitModule(int(f.Fd()), params, 0); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("finit_module %s: %w", path, err)
	}
	return nil
}

// sendFixtures writes FixtureDir as a gzipped tar, base64 in lines of
// "bondtop-lab: fixture <data>", for the host to unpack. Symbolic links are
// kept as links (the sysfs lower_* links).
func sendFixtures(report *os.File) error {
	if _, err := os.Stat(FixtureDir); err != nil {
		return nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(FixtureDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == FixtureDir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if d.Type()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name, _ = filepath.Rel(FixtureDir, path)
		hdr.ModTime = time.Unix(0, 0)
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	tw.Close()
	zw.Close()
	enc := base64.StdEncoding.EncodeToString(buf.Bytes())
	for len(enc) > 0 {
		n := min(len(enc), 4096)
		fmt.Fprintf(report, "bondtop-lab: fixture %s\n", enc[:n])
		enc = enc[n:]
	}
	return nil
}

func powerOff() {
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	select {} // pid 1 must not return while the machine powers down
}
