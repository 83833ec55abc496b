package filekind

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOf(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo: "a FIFO", file: "a regular file", link: "a symbolic link", dir: "a directory", "/dev/null": "a character device",
	} {
		st, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Of(st.Mode()); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}
