package lab

import (
	"bytes"
	"strconv"
	"testing"
)

// TestCPIOWriter reads the archive back by the newc rules.
func TestCPIOWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewCPIOWriter(&buf)
	if err := w.Dir("/lib", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.File("lib/x.ko", 0o644, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readCPIO(t, buf.Bytes())
	want := []cpioEntry{
		{"lib", cpioDir | 0o755, ""},
		{"lib/x.ko", cpioFile | 0o644, "hello"},
		{"TRAILER!!!", 0, ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries %v, want %v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// cpioEntry is one entry of a newc archive, as readCPIO reads it back.
type cpioEntry struct {
	name string
	mode uint64
	data string
}

// readCPIO reads a newc archive by its rules: 110-byte header, name padded
// to 4 bytes, data padded to 4 bytes.
func readCPIO(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var got []cpioEntry
	total := len(b)
	for len(b) > 0 {
		if len(b) < 110 || string(b[:6]) != "070701" {
			t.Fatalf("bad header at %d: %q", total-len(b), b[:min(len(b), 16)])
		}
		field := func(i int) uint64 {
			v, err := strconv.ParseUint(string(b[6+8*i:14+8*i]), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		mode, size, namesize := field(1), field(6), field(11)
		off := 110 + int(namesize)
		name := string(b[110 : off-1])
		off = (off + 3) &^ 3
		data := string(b[off : off+int(size)])
		off = (off + int(size) + 3) &^ 3
		got = append(got, cpioEntry{name, mode, data})
		b = b[off:]
	}
	return got
}
