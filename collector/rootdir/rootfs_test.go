package rootdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/hostfiles"
	"github.com/bondtop/bondtop/internal/testtree"
)

const outsideSecret = "outside-secret-4c1f"

// hostileTree is activeBackupTree plus what a tree from an untrusted host
// can hold: links out of the tree (absolute and by ..), a link to
// /dev/zero, a FIFO, a file far larger than any procfs file; and a link
// that stays inside the tree, as copied sysfs trees have.
func hostileTree(t *testing.T) *testtree.Tree {
	t.Helper()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte(outsideSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tr := testtree.ActiveBackup(t)
	link := func(target, rel string) {
		t.Helper()
		tr.Remove(rel)
		if err := os.Symlink(target, filepath.Join(tr.Dir, rel)); err != nil {
			t.Fatal(err)
		}
	}
	tr.Write("sys/class/net/bond0/bonding/active_slave", "")
	link(outside, "sys/class/net/bond0/bonding/active_slave")
	rel, err := filepath.Rel(filepath.Join(tr.Dir, "sys/class/net/bond0/bonding"), outside)
	if err != nil {
		t.Fatal(err)
	}
	tr.Write("sys/class/net/bond0/bonding/primary", "")
	link(rel, "sys/class/net/bond0/bonding/primary")
	tr.Write("sys/class/net/bond0/bonding/xmit_hash_policy", "")
	link("/dev/zero", "sys/class/net/bond0/bonding/xmit_hash_policy")
	tr.Remove("sys/class/net/bond0/bonding/mode")
	if err := syscall.Mkfifo(filepath.Join(tr.Dir, "sys/class/net/bond0/bonding/mode"), 0o644); err != nil {
		t.Fatal(err)
	}
	// eth1 has no statistics/, so its counters come from /proc/net/dev,
	// which is too large to be read.
	tr.Remove("sys/class/net/eth1/statistics")
	tr.Write("proc/net/dev", strings.Repeat("garbage line that is not an interface\n", 60000))
	// Inside the tree: eth1's mtu is a relative link to eth0's.
	tr.Write("sys/class/net/eth0/mtu", "9000\n")
	link("../eth0/mtu", "sys/class/net/eth1/mtu")
	return tr
}

// TestRootFSRefusesHostileFiles reads each hostile file through both ways
// of opening (openat2 where the kernel has it, and os.Root): nothing
// outside the tree is read, nothing blocks, and the errors say why.
func TestRootFSRefusesHostileFiles(t *testing.T) {
	tr := hostileTree(t)
	for _, way := range openWays {
		r := openRootFSVia(t, tr.Dir, way)
		for file, want := range map[string]string{
			"sys/class/net/bond0/bonding/active_slave":     "",
			"sys/class/net/bond0/bonding/primary":          "",
			"sys/class/net/bond0/bonding/xmit_hash_policy": "",
			"sys/class/net/bond0/bonding/mode":             "not a regular file (a FIFO)",
			"proc/net/dev":                                 "larger than 1024 KiB",
		} {
			done := make(chan struct{})
			var data []byte
			var err error
			go func() {
				data, err = r.ReadFile(file)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: reading %s blocks", way, file)
			}
			if err == nil || strings.Contains(string(data), outsideSecret) {
				t.Errorf("%s: %s read %d bytes (%q), want an error", way, file, len(data), truncateForTest(data))
				continue
			}
			if want != "" && !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %s: %v, want %q", way, file, err, want)
			}
		}
		if data, err := r.ReadFile("sys/class/net/eth1/mtu"); err != nil || string(data) != "9000\n" {
			t.Errorf("%s: a link inside the tree: %q, %v", way, data, err)
		}
		if _, err := r.Stat("sys/class/net/bond0/bonding/active_slave"); err == nil {
			t.Errorf("%s: Stat followed a link out of the tree", way)
		}
		if _, err := fs.ReadDir(r, "sys/class/net/bond0/bonding/mode"); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: ReadDir of a FIFO: %v", way, err)
		}
		r.Close()
	}
}

// TestRootSourceHostileTree reads the hostile tree as bondtop does: the
// reading finishes, holds nothing from outside, keeps what the tree
// rightly says (the bond, its slaves, the linked mtu), and warns about each
// refused file.
func TestRootSourceHostileTree(t *testing.T) {
	tr := hostileTree(t)
	r := readOnce(t, tr.Dir)
	b := r.Bond("bond0")
	if b == nil || len(b.Slaves) != 2 {
		t.Fatalf("bond0 lost: %+v", r.Bonds)
	}
	if b.ActiveSlave == nil || *b.ActiveSlave != "eth0" {
		t.Errorf("active slave %v, want procfs's eth0", b.ActiveSlave)
	}
	all := strings.Join(r.Warnings, "\n")
	if strings.Contains(all, outsideSecret) || strings.Contains(*b.ActiveSlave, outsideSecret) {
		t.Fatalf("the secret outside the tree was read:\n%s", all)
	}
	for _, want := range []string{"active_slave", "primary", "xmit_hash_policy", "FIFO", "larger than"} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning mentions %q:\n%s", want, all)
		}
	}
}

func truncateForTest(b []byte) []byte {
	return b[:min(len(b), 40)]
}

// TestWarningsCappedPerFile: a procfs file of thousands of garbled lines,
// under the size cap, adds a handful of warnings, not thousands.
func TestWarningsCappedPerFile(t *testing.T) {
	tr := testtree.ActiveBackup(t)
	var netdev strings.Builder
	netdev.WriteString("Inter-|   Receive\n face |bytes\n")
	for range 20000 {
		netdev.WriteString("  eth9: not numbers at all\n")
	}
	tr.Write("proc/net/dev", netdev.String())
	tr.Remove("sys/class/net/eth0/statistics") // eth0's counters: /proc/net/dev
	proc, err := os.ReadFile(filepath.Join(tr.Dir, "proc/net/bonding/bond0"))
	if err != nil {
		t.Fatal(err)
	}
	garbled := strings.Repeat("Transmit Hash Policy: (\n", 20000)
	tr.Write("proc/net/bonding/bond0", strings.Replace(string(proc), "Bonding Mode:", garbled+"Bonding Mode:", 1))
	r := readOnce(t, tr.Dir)
	perFile := map[string]int{}
	for _, w := range r.Warnings {
		file, _, _ := strings.Cut(w, ":")
		perFile[file]++
	}
	for file, n := range perFile {
		if n > hostfiles.MaxWarningsPerFile+1 {
			t.Errorf("%s: %d warnings", file, n)
		}
	}
	all := strings.Join(r.Warnings, "\n")
	for _, want := range []string{"/proc/net/dev: 19995 more lines", "/proc/net/bonding/bond0: 19995 more lines"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
}

// TestRootFSReadsWholeFiles reads files of many sizes, each way of
// opening, in an order that grows the buffer and then shrinks what is
// read: each read returns exactly the file, though a read stops as soon
// as an on-disk file's size is reached. A missing file is an error that
// names it, and a file one byte over the cap is refused.
func TestRootFSReadsWholeFiles(t *testing.T) {
	tr := testtree.New(t)
	sizes := []int{0, 5, 4095, 4096, 4097, 300_000, 3, maxTreeFile, 7}
	for i, n := range sizes {
		tr.Write(fmt.Sprintf("f%d", i), strings.Repeat(string(rune('a'+i)), n))
	}
	tr.Write("huge", strings.Repeat("x", maxTreeFile+1))
	for _, way := range openWays {
		r := openRootFSVia(t, tr.Dir, way)
		for i, n := range sizes {
			data, err := r.ReadFile(fmt.Sprintf("f%d", i))
			if err != nil || len(data) != n || strings.Trim(string(data), string(rune('a'+i))) != "" {
				t.Errorf("%s: a file of %d bytes read as %d bytes, %v", way, n, len(data), err)
			}
		}
		if _, err := r.ReadFile("huge"); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("%s: a file over the cap: %v", way, err)
		}
		_, err := r.ReadFile("missing")
		var pe *fs.PathError
		if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || !strings.Contains(pe.Path, "missing") {
			t.Errorf("%s: a missing file: %v, want a path error naming it", way, err)
		}
		r.Close()
	}
}

// TestRootFSReadsProcAndSys reads this host's own procfs and sysfs through
// a rootFS over /: their files say a size of 0 or 4096 whatever they
// hold, so reading must go on until the end rather than trust it.
func TestRootFSReadsProcAndSys(t *testing.T) {
	r, err := openRootFS("/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want, err := os.ReadFile("/sys/class/net/lo/mtu")
	if err != nil {
		t.Fatal(err) // every Linux host with sysfs has lo
	}
	if got, err := r.ReadFile("sys/class/net/lo/mtu"); err != nil || string(got) != string(want) {
		t.Errorf("sysfs lo/mtu: %q, %v; want %q", got, err, want)
	}
	wantStatus, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadFile("proc/self/limits")
	if err != nil || string(got) != string(wantStatus) {
		t.Errorf("procfs self/limits: %d bytes, %v; want %d bytes", len(got), err, len(wantStatus))
	}
	// A procfs file larger than the first buffer comes in several reads
	// (/proc/crypto is some 10 KiB where the kernel has a crypto API).
	if want, err := os.ReadFile("/proc/crypto"); err == nil {
		if got, err := r.ReadFile("proc/crypto"); err != nil || string(got) != string(want) {
			t.Errorf("procfs crypto: %d bytes, %v; want %d bytes", len(got), err, len(want))
		}
	}
}

// TestRootFSStatAndReadLinkAgree: Stat and ReadLink through openat2 say
// what they say through os.Root, for every kind of path a hostile tree
// holds: a file, a directory, links inside and out of the tree, a FIFO,
// a device behind a link, a missing file, a link whose parent is a link.
func TestRootFSStatAndReadLinkAgree(t *testing.T) {
	tr := hostileTree(t)
	if err := os.Symlink("bond0", filepath.Join(tr.Dir, "sys/class/net/bondlink")); err != nil {
		t.Fatal(err)
	}
	// Longer than the first buffer readlinkat is given.
	if err := os.Symlink(strings.Repeat("../", 150)+"x", filepath.Join(tr.Dir, "sys/class/net/longlink")); err != nil {
		t.Fatal(err)
	}
	fast, err := openRootFS(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	if fast.dirfd < 0 {
		t.Fatal("no directory descriptor for openat2")
	}
	slow, err := openRootFS(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	closeDirFD(slow.dirfd)
	slow.dirfd = -1
	for _, name := range []string{
		"proc/net/bonding/bond0", "sys/class/net", "sys/class/net/eth1/mtu", "sys/class/net/eth0/mtu",
		"sys/class/net/bond0/bonding/active_slave", "sys/class/net/bond0/bonding/primary",
		"sys/class/net/bond0/bonding/xmit_hash_policy", "sys/class/net/bond0/bonding/mode",
		"sys/class/net/missing", "sys/class/net/bondlink", "sys/class/net/bondlink/bonding/primary",
		"sys/class/net/longlink",
	} {
		fi, ferr := fast.Stat(name)
		si, serr := slow.Stat(name)
		if (ferr == nil) != (serr == nil) || errors.Is(ferr, fs.ErrNotExist) != errors.Is(serr, fs.ErrNotExist) {
			t.Errorf("Stat %s: openat2 %v, os.Root %v", name, ferr, serr)
		} else if ferr == nil && (fi.Mode() != si.Mode() || fi.Name() != si.Name() || !si.IsDir() && fi.Size() != si.Size() || fi.IsDir() != si.IsDir()) {
			t.Errorf("Stat %s: openat2 %v %q %d, os.Root %v %q %d", name, fi.Mode(), fi.Name(), fi.Size(), si.Mode(), si.Name(), si.Size())
		}
		fl, ferr := fast.ReadLink(name)
		sl, serr := slow.ReadLink(name)
		if (ferr == nil) != (serr == nil) || fl != sl || errors.Is(ferr, fs.ErrNotExist) != errors.Is(serr, fs.ErrNotExist) {
			t.Errorf("ReadLink %s: openat2 %q, %v; os.Root %q, %v", name, fl, ferr, sl, serr)
		}
	}
}

// The ways a rootFS opens the tree's files: openat2 with raw system
// calls (a tree on a local file system), openat2 with ordinary ones (any
// other), and os.Root (no openat2).
var openWays = []string{"openat2, raw calls", "openat2", "os.Root"}

// openRootFSVia opens dir as a rootFS that opens its files the given way.
func openRootFSVia(t *testing.T, dir, way string) *rootFS {
	t.Helper()
	r, err := openRootFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	switch way {
	case "openat2, raw calls":
		r.raw = true // whatever the file system: the calls are the same
	case "openat2":
		r.raw = false
	case "os.Root":
		closeDirFD(r.dirfd)
		r.dirfd = -1
	}
	return r
}

// TestNetDevReadOnlyWhenNeeded: a tree whose interfaces all have their
// statistics/ does not read /proc/net/dev (a garbled one says nothing);
// one without them does, once a tick, whatever the number of interfaces
// that need it.
func TestNetDevReadOnlyWhenNeeded(t *testing.T) {
	tr := testtree.ActiveBackup(t)
	tr.Write("proc/net/dev", "Inter-|   Receive\n face |bytes\n  eth0: not numbers\n")
	src, err := New(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	read := func() collector.Reading {
		t.Helper()
		r, err := src.Read()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if w := strings.Join(read().Warnings, "\n"); strings.Contains(w, "net/dev") {
		t.Fatalf("/proc/net/dev read though every interface has statistics/:\n%s", w)
	}
	tr.Remove("sys/class/net/eth0/statistics")
	tr.Remove("sys/class/net/eth1/statistics")
	r := read()
	if n := strings.Count(strings.Join(r.Warnings, "\n"), "/proc/net/dev"); n != 1 {
		t.Fatalf("%d warnings about /proc/net/dev, want the one of its one read: %q", n, r.Warnings)
	}
}

// readOnce reads the tree at dir once through a new root source.
func readOnce(t *testing.T, dir string) collector.Reading {
	t.Helper()
	src, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r, err := src.Read()
	if err != nil {
		t.Fatal(err)
	}
	return r
}
