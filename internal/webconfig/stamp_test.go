package webconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hourAgo is when age puts files: older than racyWindow, so their stamps
// are trusted; the same for every file, so only inode and size tell them
// apart.
var hourAgo = time.Now().Add(-time.Hour).Truncate(time.Second)

// age sets the modification times of paths to hourAgo.
func age(t *testing.T, paths ...string) {
	t.Helper()
	old := hourAgo
	for _, p := range paths {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStamps: a stamp sees a file rewritten, replaced by a rename, or
// removed, and a file modified just before it was read is not trusted.
func TestStamps(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a", []byte("one"))
	stamps := func() []stamp {
		r := &reader{}
		if _, err := r.read(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return r.stamps
	}
	now := stamps()
	if !racy(now, time.Now()) {
		t.Error("a file written just now is trusted")
	}
	age(t, p)
	st := stamps()
	if racy(st, time.Now()) || !unchanged(st) {
		t.Fatalf("an hour-old file: racy %v, unchanged %v", racy(st, time.Now()), unchanged(st))
	}
	writeFile(t, dir, "a", []byte("two!"))
	age(t, p)
	if unchanged(st) {
		t.Error("a rewrite of another size unseen")
	}
	st = stamps()
	writeFile(t, dir, "b", []byte("two!"))
	age(t, filepath.Join(dir, "b"))
	if err := os.Rename(filepath.Join(dir, "b"), p); err != nil {
		t.Fatal(err)
	}
	if unchanged(st) {
		t.Error("a rename over the file (same size and time) unseen")
	}
	st = stamps()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if unchanged(st) {
		t.Error("a removal unseen")
	}
	if gone := stamps(); !unchanged(gone) {
		t.Error("a file still missing counts as changed")
	}
	if unchanged(nil) {
		t.Error("nothing read counts as unchanged")
	}
}

// TestServeTrustsStamps: the server reads the files again only when a
// stamp changed: a file edited without changing its stamp (in place, the
// same size, its time put back) is not read again, so what is applied is
// still the old content; a touch makes it read.
func TestServeTrustsStamps(t *testing.T) {
	f := newFixture(t)
	good := "basic_auth_users:\n  alice: " + hash(t, "right") + "\n"
	config := f.config(t, good)
	age(t, config)
	s := serve(t, config)
	c := client(nil, false)
	url := "http://" + s.addr + "/"
	if a, err := get(c, url, "alice", "right"); err != nil || a.code != 200 {
		t.Fatalf("%d %v", a.code, err)
	}
	before, err := os.Stat(config)
	if err != nil {
		t.Fatal(err)
	}
	broken := "basic_auth_users: [" + strings.Repeat(" ", len(good)-len("basic_auth_users: [")-1) + "\n"
	if err := os.WriteFile(config, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(config, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if a, err := get(c, url, "alice", "right"); err != nil || a.code != 200 {
		t.Errorf("an unchanged stamp: %d %v, want the cached configuration's 200", a.code, err)
	}
	now := time.Now()
	if err := os.Chtimes(config, now, now); err != nil {
		t.Fatal(err)
	}
	if a, err := get(c, url, "alice", "right"); err != nil || a.code != 500 {
		t.Errorf("touched: %d %v, want 500 (the broken file read)", a.code, err)
	}
}
