package collector

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTreeIsLocal: raw calls for trees in memory and on local disks,
// ordinary ones for any other file system (devpts stands for those here:
// one no tree lives on), and for no directory at all.
func TestTreeIsLocal(t *testing.T) {
	for dir, want := range map[string]bool{"/proc": true, "/sys": true, "/dev/shm": true, "/dev/pts": false} {
		fd := openDirFD(dir)
		if fd < 0 {
			t.Errorf("%s: cannot open", dir)
			continue
		}
		if got := treeIsLocal(fd); got != want {
			var st unix.Statfs_t
			unix.Fstatfs(fd, &st)
			t.Errorf("%s (file system %#x): local %v, want %v", dir, st.Type, got, want)
		}
		closeDirFD(fd)
	}
	if treeIsLocal(-1) {
		t.Error("no directory is local")
	}
}

// TestRootFSRawOnlyOnTheTreesMount: in a tree on a local file system the
// files of the tree's own mount are read with raw calls, and a file
// beneath another mount (procfs under /, here) with ordinary ones: the
// raw open refuses to cross (RESOLVE_NO_XDEV), and the ordinary one reads
// it, as one of a file system that may block would be.
func TestRootFSRawOnlyOnTheTreesMount(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mtu"), []byte("9000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := openRootFSVia(t, dir, "openat2, raw calls")
	defer tree.Close()
	fd, raw, _, err := tree.openBeneath("open", "mtu", &readHow)
	if err != nil || !raw {
		t.Fatalf("a file of the tree's mount: raw %v, %v", raw, err)
	}
	closeFile(raw, fd)
	if data, err := tree.ReadFile("mtu"); err != nil || string(data) != "9000\n" {
		t.Errorf("read with raw calls: %q, %v", data, err)
	}

	root := openRootFSVia(t, "/", "openat2, raw calls")
	defer root.Close()
	fd, raw, _, err = root.openBeneath("open", "proc/self/stat", &readHow)
	if err != nil || raw {
		t.Fatalf("a file beneath another mount: raw %v, %v", raw, err)
	}
	closeFile(raw, fd)
	if data, err := root.ReadFile("proc/self/stat"); err != nil || len(data) == 0 {
		t.Errorf("read across the mount: %d bytes, %v", len(data), err)
	}
}
