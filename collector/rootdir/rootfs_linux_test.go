package rootdir

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

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

// atimeTree is a tree of one file, "rx_bytes", whose access time is an
// hour older than its modification time, as in a tree that something
// rewrites: under relatime, any ordinary read of it writes a new atime.
func atimeTree(t *testing.T) (dir string, old time.Time) {
	t.Helper()
	dir = t.TempDir()
	name := filepath.Join(dir, "rx_bytes")
	if err := os.WriteFile(name, []byte("1234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old = time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(name, old, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The control: a file this file system gives a new atime when read;
	// on a noatime mount there is nothing to leave alone.
	control := filepath.Join(dir, "control")
	if err := os.WriteFile(control, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(control, old, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(control); err != nil {
		t.Fatal(err)
	}
	if atime(t, control).Equal(old) {
		t.Skipf("%s keeps no access times (mounted noatime): nothing to test", dir)
	}
	return dir, old
}

func atime(t *testing.T, name string) time.Time {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(name, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Atim.Unix())
}

// TestRootFSLeavesAccessTimesAlone: reading a tree's files, once or
// through a kept descriptor, writes no access time (O_NOATIME), for raw
// and ordinary calls.
func TestRootFSLeavesAccessTimesAlone(t *testing.T) {
	for _, way := range []string{"openat2, raw calls", "openat2"} {
		dir, old := atimeTree(t)
		tree := openRootFSVia(t, dir, way)
		if data, err := tree.ReadFileScratch("rx_bytes"); err != nil || string(data) != "1234\n" {
			t.Fatalf("%s: read %q, %v", way, data, err)
		}
		tree.keepDir(".", 1)
		tree.kept["."].trusted = true // as a directory quiet for a while is
		for range 3 {
			if data, err := tree.ReadKeptScratch("rx_bytes"); err != nil || string(data) != "1234\n" {
				t.Fatalf("%s: kept read %q, %v", way, data, err)
			}
		}
		if tree.keptFiles != 1 {
			t.Errorf("%s: %d files kept open, want 1", way, tree.keptFiles)
		}
		if got := atime(t, filepath.Join(dir, "rx_bytes")); !got.Equal(old) {
			t.Errorf("%s: reading moved the access time from %v to %v", way, old, got)
		}
		tree.Close()
	}
}

// TestRootFSReadsAnotherUsersTree: the kernel lets only a file's owner
// (or root) open it with O_NOATIME. A tree another user owns is read as
// before, through openat2 still, with its access times written.
func TestRootFSReadsAnotherUsersTree(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to read as another user (setfsuid)")
	}
	dir, old := atimeTree(t)
	for d := dir; d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil { // t.TempDir's are 0700
			t.Fatal(err)
		}
	}
	wasOpenat2 := !noOpenat2.Load()
	defer noOpenat2.Store(!wasOpenat2)
	tree := openRootFSVia(t, dir, "openat2, raw calls")
	defer tree.Close()

	type result struct {
		data string
		err  error
	}
	done := make(chan result)
	go func() {
		// This thread reads as nobody: setfsuid is per thread, and
		// giving up uid 0 drops CAP_FOWNER with it. The goroutine ends
		// locked, so the thread ends with it.
		runtime.LockOSThread()
		unix.Setfsuid(65534)
		if now, _ := unix.SetfsuidRetUid(-1); now != 65534 {
			done <- result{err: errors.New("setfsuid(65534) did not take")}
			return
		}
		data, err := tree.ReadFileScratch("rx_bytes")
		done <- result{string(data), err}
	}()
	r := <-done
	if r.err != nil || r.data != "1234\n" {
		t.Fatalf("read as nobody: %q, %v", r.data, r.err)
	}
	if !tree.atimeRefused {
		t.Error("O_NOATIME on another user's file was not refused: the test read as root")
	}
	if wasOpenat2 && noOpenat2.Load() {
		t.Error("the refused O_NOATIME was taken for openat2 being unavailable")
	}
	if atime(t, filepath.Join(dir, "rx_bytes")).Equal(old) {
		t.Error("read without O_NOATIME, yet the access time stayed")
	}
}
