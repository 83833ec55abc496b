package live

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/vishvananda/netlink"
)

// veth0Counters is veth0's line of a /proc/net/dev text.
func veth0Counters(t *testing.T, text []byte) string {
	t.Helper()
	for line := range strings.SplitSeq(string(text), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "veth0:") {
			return line
		}
	}
	t.Fatalf("no veth0 in:\n%s", text)
	return ""
}

// TestKeptFileProcfs (/proc/thread-self: this thread's namespace, where
// the veths are): a procfs seq_file kept open and read again from
// offset 0 says what it says now, not what it said when opened: the
// counters of a veth move with the frames sent between two reads, as a fresh
// open sees them.
func TestKeptFileProcfs(t *testing.T) {
	inNewNetns(t)
	v0, _ := addVeth(t, "veth0", "veth1", 1500)
	waitOperState(t, "veth0", netlink.OperUp)
	fsys := os.DirFS("/")
	var k keptFile
	defer k.close()
	first, err := k.read(fsys, "proc/thread-self/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	if k.f == nil {
		t.Fatal("the procfs file was not kept open")
	}
	before := veth0Counters(t, first)
	kept := k.f
	sendFrames(t, v0.Attrs().Index, 10)
	second, err := k.read(fsys, "proc/thread-self/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	if k.f != kept {
		t.Error("the kept file was opened again")
	}
	fresh, err := os.ReadFile("/proc/thread-self/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	after := veth0Counters(t, second)
	if after == before {
		t.Errorf("veth0's counters did not move in the kept file: %q", after)
	}
	if want := veth0Counters(t, fresh); after != want {
		t.Errorf("kept file says %q, a fresh read %q", after, want)
	}
}

// TestKeptFileReopensRemoved: the kernel removes a procfs file while
// bondtop holds it open (a bond deleted and created again between two
// ticks). The kept descriptor then fails, and the file is opened again
// by its name: what is read is the new file's text. Removed for good,
// the read fails and nothing stays open. The file here is a veth's IPv6
// MTU under /proc/sys: removed with the veth like a bond's
// /proc/net/bonding file with the bond.
func TestKeptFileReopensRemoved(t *testing.T) {
	inNewNetns(t)
	const name = "proc/sys/net/ipv6/conf/veth0/mtu"
	addVeth(t, "veth0", "veth1", 1500)
	fsys := os.DirFS("/")
	var k keptFile
	defer k.close()
	read := func(want string) {
		t.Helper()
		got, err := k.read(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(got)) != want {
			t.Fatalf("read %q, want %s", got, want)
		}
	}
	read("1500")
	kept := k.f
	del := func() {
		t.Helper()
		l, err := netlink.LinkByName("veth0")
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkDel(l); err != nil {
			t.Fatal(err)
		}
	}
	del()
	addVeth(t, "veth0", "veth1", 9000)
	read("9000")
	if k.f == kept || k.f == nil {
		t.Errorf("the removed file's descriptor was kept (%p, before %p)", k.f, kept)
	}
	del()
	if got, err := k.read(fsys, name); err == nil {
		t.Errorf("the file is gone, and read says %q", got)
	}
	if k.f != nil {
		t.Error("a file that failed is kept open")
	}
}

// TestKeptFileLarge: a text larger than the first buffer is read whole,
// from an OS file (kept open) and from another file system (read anew
// each time, so that a changed file shows).
func TestKeptFileLarge(t *testing.T) {
	text := bytes.Repeat([]byte("Slave Interface: eth0\n"), 2000) // 44 KB
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bond0"), text, 0o600); err != nil {
		t.Fatal(err)
	}
	var k keptFile
	defer k.close()
	for range 2 {
		got, err := k.read(os.DirFS(dir), "bond0")
		if err != nil || !bytes.Equal(got, text) {
			t.Fatalf("OS file: %d bytes (%v), want %d", len(got), err, len(text))
		}
	}

	mapFS := fstest.MapFS{"bond0": &fstest.MapFile{Data: text}}
	var m keptFile
	got, err := m.read(mapFS, "bond0")
	if err != nil || !bytes.Equal(got, text) {
		t.Fatalf("MapFS: %d bytes (%v), want %d", len(got), err, len(text))
	}
	mapFS["bond0"] = &fstest.MapFile{Data: []byte("short\n")}
	if got, err := m.read(mapFS, "bond0"); err != nil || string(got) != "short\n" {
		t.Fatalf("MapFS after a change: %q (%v)", got, err)
	}
	if m.f != nil {
		t.Error("a MapFS file kept open")
	}
	if _, err := m.read(mapFS, "missing"); !os.IsNotExist(err) {
		t.Errorf("missing file: %v, want not exist", err)
	}
}
