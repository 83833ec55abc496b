package dirstate

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDescribeSeesChanges(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	before, err := Describe(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "f -rw------- \"one\"\nl Lrwxrwxrwx -> f\n"
	if before != want {
		t.Fatalf("%q, want %q", before, want)
	}
	for _, change := range []func() error{
		func() error { return os.WriteFile(filepath.Join(dir, "f"), []byte("two"), 0o600) },
		func() error { return os.Chmod(filepath.Join(dir, "f"), 0o644) },
		func() error { return os.WriteFile(filepath.Join(dir, "new"), nil, 0o600) },
	} {
		if err := change(); err != nil {
			t.Fatal(err)
		}
		after, err := Describe(dir)
		if err != nil {
			t.Fatal(err)
		}
		if after == before {
			t.Fatalf("a change is not seen: %q", after)
		}
		before = after
	}
}
