package rootdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKeptFilesFollowTheTree: a statistics file kept open between ticks
// shows what the tree holds now, however the tree changed: written in
// place, renamed over, its directory swapped for another or for a link
// out of the tree, removed; and a directory no tick asks for any more
// has its files closed.
func TestKeptFilesFollowTheTree(t *testing.T) {
	tree := t.TempDir()
	const dir = "sys/class/net/eth0/statistics"
	abs := filepath.Join(tree, dir)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, content string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(abs, "rx_bytes"), "1\n")
	r, err := openRootFS(tree)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The tree was written a moment ago: pretend it has been quiet since.
	r.now = func() time.Time { return time.Now().Add(time.Hour) }
	tick := uint64(0)
	read := func() (string, error) {
		t.Helper()
		tick++
		r.keepDir(dir, tick)
		data, err := r.ReadKeptScratch(dir + "/rx_bytes")
		r.sweepKept(tick)
		return string(data), err
	}
	expect := func(what, want string) {
		t.Helper()
		got, err := read()
		if err != nil || got != want {
			t.Fatalf("%s: read %q, %v; want %q", what, got, err, want)
		}
	}

	expect("first read", "1\n")
	if r.keptFiles != 1 {
		t.Fatalf("%d files kept after a read of a quiet directory, want 1", r.keptFiles)
	}
	write(filepath.Join(abs, "rx_bytes"), "22\n")
	expect("written in place", "22\n")

	write(filepath.Join(abs, "rx_bytes.new"), "333\n")
	if err := os.Rename(filepath.Join(abs, "rx_bytes.new"), filepath.Join(abs, "rx_bytes")); err != nil {
		t.Fatal(err)
	}
	expect("renamed over", "333\n")

	if err := os.Rename(abs, abs+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(abs, 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(abs, "rx_bytes"), "4444\n")
	expect("directory swapped", "4444\n")

	outside := t.TempDir()
	write(filepath.Join(outside, "rx_bytes"), "outside\n")
	if err := os.RemoveAll(abs); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, abs); err != nil {
		t.Fatal(err)
	}
	if got, err := read(); err == nil || got == "outside\n" {
		t.Fatalf("a directory swapped for a link out of the tree read %q, %v; want it refused", got, err)
	}

	if err := os.Remove(abs); err != nil {
		t.Fatal(err)
	}
	if _, err := read(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a removed directory's file: %v, want it missing", err)
	}

	if err := os.Mkdir(abs, 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(abs, "rx_bytes"), "5\n")
	expect("back again", "5\n")
	tick++
	r.sweepKept(tick)
	if r.keptFiles != 0 || len(r.kept) != 0 {
		t.Fatalf("after a tick that read nothing: %d files in %d directories kept, want none", r.keptFiles, len(r.kept))
	}
}

// TestKeptFilesWaitForAQuietDirectory: a directory changed within
// keepQuiet may change again without its change time moving, so its
// files are opened on each read until it has been quiet that long.
func TestKeptFilesWaitForAQuietDirectory(t *testing.T) {
	tree := t.TempDir()
	const dir = "sys/class/net/eth0/statistics"
	if err := os.MkdirAll(filepath.Join(tree, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, dir, "rx_bytes"), []byte("7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := openRootFS(tree)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	now := time.Now()
	r.now = func() time.Time { return now }
	r.keepDir(dir, 1)
	if data, err := r.ReadKeptScratch(dir + "/rx_bytes"); err != nil || string(data) != "7\n" {
		t.Fatalf("read %q, %v", data, err)
	}
	if r.keptFiles != 0 {
		t.Fatalf("%d files kept in a directory changed just now, want 0", r.keptFiles)
	}
	now = now.Add(keepQuiet + time.Second)
	r.keepDir(dir, 2)
	if data, err := r.ReadKeptScratch(dir + "/rx_bytes"); err != nil || string(data) != "7\n" {
		t.Fatalf("read %q, %v", data, err)
	}
	if r.keptFiles != 1 {
		t.Fatalf("%d files kept once the directory was quiet, want 1", r.keptFiles)
	}
}

// TestKeptFilesCapByFileSystem: a tree on a disk keeps the statistics of
// many bonds open (more than the sysfs cap), a tree that is the live
// /sys keeps at most maxKeptSysfs of its attributes, and every file
// past a cap is still read, the ordinary way.
func TestKeptFilesCapByFileSystem(t *testing.T) {
	dir := t.TempDir()
	const dirs, files = 60, 10 // 600 files, over maxKeptSysfs
	for d := range dirs {
		sub := filepath.Join(dir, fmt.Sprintf("if%d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range files {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("c%d", f)), []byte(fmt.Sprintf("%d\n", d*files+f)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tree, err := openRootFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	for d := range dirs {
		sub := fmt.Sprintf("if%d", d)
		tree.keepDir(sub, 1)
		tree.kept[sub].trusted = true // as a directory quiet for a while is
		for f := range files {
			data, err := tree.ReadKeptScratch(fmt.Sprintf("%s/c%d", sub, f))
			if want := fmt.Sprintf("%d\n", d*files+f); err != nil || string(data) != want {
				t.Fatalf("%s/c%d: %q, %v, want %q", sub, f, data, err, want)
			}
		}
	}
	if want := min(dirs*files, keepLimit()); tree.keptFiles != want {
		t.Errorf("a tree on disk: %d files kept open, want %d", tree.keptFiles, want)
	}

	sys, err := openRootFS("/sys/devices/virtual/net") // class/net/lo links here
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	sys.keptFiles = maxKeptSysfs // as if that many were kept already
	sys.keepDir("lo/statistics", 1)
	sys.kept["lo/statistics"].trusted = true
	if !sys.kept["lo/statistics"].sysfs {
		t.Fatal("/sys/class/net/lo/statistics not seen as sysfs")
	}
	if _, err := sys.ReadKeptScratch("lo/statistics/rx_bytes"); err != nil {
		t.Fatal(err)
	}
	if sys.keptFiles != maxKeptSysfs {
		t.Errorf("sysfs past its cap: %d files kept, want %d", sys.keptFiles, maxKeptSysfs)
	}
}
