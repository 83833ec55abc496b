package record

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bondtop/bondtop/internal/dirstate"
)

// TestCreateIsPrivate: a new recording is readable by its owner only.
func TestCreateIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "new.rec")
	writeRecording(t, path, demoSnapshots(t, 2))
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Fatalf("a new recording is %v, want -rw-------", st.Mode())
	}
}

// TestCreateRefuses: Create refuses what is not a recording (text, other
// gzip data, binary, a FIFO, a directory, a symbolic link to a file, a
// dangling link) with an error that says what it found, and leaves each
// exactly as it was; an empty file and an earlier recording are taken.
func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	mustWrite(t, secret, "owner's private notes\n", 0o600)

	text := filepath.Join(dir, "notes.txt")
	mustWrite(t, text, "hello world\nsecond line\n", 0o644)
	gzOther := filepath.Join(dir, "other.gz")
	mustWrite(t, gzOther, string(gzipOf(t, "just some text\n")), 0o644)
	bin := filepath.Join(dir, "bin")
	mustWrite(t, bin, "\x7fELF\x00\x00\x01\x02", 0o755)
	link := filepath.Join(dir, "link.rec")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.rec")
	created := filepath.Join(dir, "would-be-created")
	if err := os.Symlink(created, dangling); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ path, want string }{
		{text, `a text file beginning "hello world"`},
		{gzOther, "gzip data that is not a bondtop recording"},
		{bin, "binary data"},
		{link, "is a symbolic link"},
		{dangling, "is a symbolic link"},
		{fifo, "is a FIFO"},
		{sub, "directory"},
	} {
		before := snapshotFiles(t, dir)
		done := make(chan error, 1)
		go func() {
			w, err := Create(c.path, Header{Started: time.Now(), Interval: 1})
			if err == nil {
				w.Close()
			}
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Create(%s) hangs", filepath.Base(c.path))
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Create(%s): %v, want an error with %q", filepath.Base(c.path), err, c.want)
		}
		if after := snapshotFiles(t, dir); after != before {
			t.Errorf("Create(%s) changed the directory:\nbefore %s\nafter  %s", filepath.Base(c.path), before, after)
		}
	}
	if _, err := os.Lstat(created); !os.IsNotExist(err) {
		t.Errorf("the dangling link's target was created (%v)", err)
	}

	empty := filepath.Join(dir, "empty.rec")
	mustWrite(t, empty, "", 0o600)
	snaps := demoSnapshots(t, 4)
	writeRecording(t, empty, snaps[:2])
	writeRecording(t, empty, snaps[2:]) // appends to a recording
	rec, err := Read(empty)
	if err != nil || len(rec.Headers) != 2 || len(rec.Entries) != 4 {
		t.Fatalf("empty file then append: %v, %d headers, %d entries", err, len(rec.Headers), len(rec.Entries))
	}
}

// TestCreateRefusesNewerFormat: a recording of a newer format is not
// extended with this version's lines.
func TestCreateRefusesNewerFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.rec")
	mustWrite(t, path, string(gzipOf(t, `{"bondtop_recording":99,"interval_s":1}`+"\n")), 0o600)
	if _, err := Create(path, Header{}); err == nil || !strings.Contains(err.Error(), "newer bondtop") {
		t.Fatalf("Create on a format 99 file: %v", err)
	}
}

func mustWrite(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

// snapshotFiles describes every entry of dir.
func snapshotFiles(t *testing.T, dir string) string {
	t.Helper()
	d, err := dirstate.Describe(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func gzipOf(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write([]byte(s))
	w.Close()
	return buf.Bytes()
}
