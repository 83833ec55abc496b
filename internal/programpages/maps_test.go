package programpages

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures are /proc/PID/maps of real processes on this project's
// build machine: bondtop's dashboard (a static Go program), the same
// binary run from a path with a space and deleted while it ran, and cat
// (a dynamic C program with a [heap] and shared libraries).
func TestParseMapsOfRealProcesses(t *testing.T) {
	for _, c := range []struct {
		file, program                 string
		mappings, readOnly, writeable int
	}{
		{"bondtop.maps", "/work/main/bin/bondtop", 31, 2, 1},
		{"deleted-space.maps", "/tmp/bond top (deleted)", 29, 2, 1},
		{"cat.maps", "/usr/bin/cat", 38, 4, 1},
	} {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			maps, err := ParseMaps(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if len(maps) != c.mappings {
				t.Errorf("%d mappings, want %d", len(maps), c.mappings)
			}
			var readOnly, writeable int
			for _, m := range maps {
				if m.Path != c.program {
					continue
				}
				if !m.Private || !m.Readable {
					t.Errorf("%+v: the program is mapped private and readable", m)
				}
				if m.Writable {
					writeable++
				} else {
					readOnly++
				}
			}
			if readOnly != c.readOnly || writeable != c.writeable {
				t.Errorf("%s: %d read-only and %d writable mappings, want %d and %d",
					c.program, readOnly, writeable, c.readOnly, c.writeable)
			}
		})
	}
}

func TestParseMapsFields(t *testing.T) {
	maps, err := ParseMaps(strings.NewReader(
		"00400000-00c96000 r-xp 00000000 fe:00 9994703                            /work/main/bin/bondtop\n" +
			"7f5e46aa3000-7f5e46aa5000 r-xp 00000000 00:00 0                          [vdso]\n" +
			"01660000-036a6000 rw-p 00000000 00:00 0 \n" +
			"7f06f26cd000-7f06f2724000 r--s 00000000 fe:00 316526                     /dev/shm/a  b\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{Start: 0x400000, End: 0xc96000, Readable: true, Executable: true, Private: true, Path: "/work/main/bin/bondtop"},
		{Start: 0x7f5e46aa3000, End: 0x7f5e46aa5000, Readable: true, Executable: true, Private: true, Path: "[vdso]"},
		{Start: 0x1660000, End: 0x36a6000, Readable: true, Writable: true, Private: true},
		{Start: 0x7f06f26cd000, End: 0x7f06f2724000, Readable: true, Path: "/dev/shm/a  b"},
	}
	if fmt.Sprint(maps) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", maps, want)
	}
}

func TestParseMapsRefusesGarble(t *testing.T) {
	for _, line := range []string{
		"00400000-00c96000 r-xp 00000000 fe:00",         // no inode
		"00400000 r-xp 00000000 fe:00 1 /x",             // no end
		"00c96000-00400000 r-xp 00000000 fe:00 1 /x",    // end before start
		"0040000g-00c96000 r-xp 00000000 fe:00 1 /x",    // not hex
		"00400000-00c96000 rwxq 00000000 fe:00 1 /x",    // neither private nor shared
		"00400000-00c96000 r-x 00000000 fe:00 1 /x",     // three permissions
		"00400000-00c96000 r-xp 00000000 fe:00 1 /x\n:", // a second line garbled
	} {
		if _, err := ParseMaps(strings.NewReader(line)); err == nil {
			t.Errorf("%q: no error", line)
		}
	}
}

// format writes m back as a line of maps, as the kernel would.
func format(m Mapping) string {
	perm := func(on bool, c byte) byte {
		if on {
			return c
		}
		return '-'
	}
	share := byte('s')
	if m.Private {
		share = 'p'
	}
	return fmt.Sprintf("%08x-%08x %c%c%c%c 00000000 00:00 0 %s", m.Start, m.End,
		perm(m.Readable, 'r'), perm(m.Writable, 'w'), perm(m.Executable, 'x'), share, m.Path)
}

func FuzzParseMaps(f *testing.F) {
	for _, file := range []string{"bondtop.maps", "deleted-space.maps", "cat.maps"} {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
		for line := range strings.Lines(string(b)) {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		maps, err := ParseMaps(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, m := range maps {
			if m.End < m.Start {
				t.Fatalf("%+v: ends before it starts", m)
			}
			if strings.HasPrefix(m.Path, " ") {
				t.Fatalf("%+v: the path keeps the padding", m)
			}
			again, err := ParseMaps(strings.NewReader(format(m)))
			if err != nil || len(again) != 1 || again[0] != m {
				t.Fatalf("%+v written as %q reads back as %+v, %v", m, format(m), again, err)
			}
		}
	})
}

func TestPageFlags(t *testing.T) {
	for _, c := range []struct {
		entry                       Page
		present, swapped, file, own bool
	}{
		{0, false, false, false, false},
		{1<<63 | 1<<61 | 0x1234, true, false, true, false}, // a file's page
		{1<<63 | 0x1234, true, false, false, true},         // written: the process's own
		{1 << 62, false, true, false, true},                // swapped out
	} {
		p := c.entry
		if p.Present() != c.present || p.Swapped() != c.swapped || p.File() != c.file || p.Own() != c.own {
			t.Errorf("%#x: present %v swapped %v file %v own %v", uint64(p), p.Present(), p.Swapped(), p.File(), p.Own())
		}
	}
}
