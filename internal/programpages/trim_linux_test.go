package programpages

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestTrimKeepsTheProcesssOwnPages has the kernel judge trim on a private
// mapping of a file of 16 pages, all read and one written: the written
// page (anonymous now, as a breakpoint in code would be) stays mapped with
// its write, the others leave the resident set and read back as the
// file's.
func TestTrimKeepsTheProcesssOwnPages(t *testing.T) {
	ps := os.Getpagesize()
	const pages, written = 16, 5
	content := make([]byte, pages*ps)
	for i := range content {
		content[i] = byte(i / ps)
	}
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := unix.Mmap(int(f.Fd()), 0, len(content), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	var sum int
	for i := 0; i < len(mem); i += ps {
		sum += int(mem[i]) // every page read: mapped from the page cache
	}
	if want := pages * (pages - 1) / 2; sum != want {
		t.Fatalf("the pages read %d, want %d", sum, want)
	}
	mem[written*ps] = 0xAA // one written: copied, the process's own
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Fatal(err)
	}
	defer pagemap.Close()
	m := mappingOf(t, mem)
	before := states(t, pagemap, m)
	if before.present != pages || !slices.Equal(before.own, []int{written}) {
		t.Fatalf("before: %d present, own %v; want %d and [%d]", before.present, before.own, pages, written)
	}

	got, err := trim(pagemap, []Mapping{m}, ps)
	if err != nil {
		t.Fatal(err)
	}
	if got != (Trimmed{Unmapped: pages - 1, Kept: 1}) {
		t.Errorf("trim: %+v, want %d unmapped and 1 kept", got, pages-1)
	}
	after := states(t, pagemap, m)
	if after.present != 1 || !slices.Equal(after.own, []int{written}) {
		t.Errorf("after: %d present, own %v; want 1 and [%d]", after.present, after.own, written)
	}
	if mem[written*ps] != 0xAA {
		t.Errorf("the written page lost its write: %#x", mem[written*ps])
	}
	want := bytes.Clone(content)
	want[written*ps] = 0xAA
	if !bytes.Equal(mem, want) {
		t.Error("the unmapped pages do not read back as the file's")
	}
}

// TestTrimProgram trims the test binary itself: pages of its code and
// read-only data leave, and it goes on running (the rest of the test is
// that code, faulted back in).
func TestTrimProgram(t *testing.T) {
	before := programResident(t)
	got, err := Trim()
	if err != nil {
		t.Fatal(err)
	}
	after := programResident(t)
	t.Logf("the test binary's read-only pages: %d resident, trimmed %+v, %d resident after", before, got, after)
	if got.Unmapped == 0 || after >= before {
		t.Errorf("%d resident before, %d after, %d unmapped: nothing left", before, after, got.Unmapped)
	}
	if got.Kept != 0 {
		t.Errorf("%d pages of the program kept as the process's own, with no debugger", got.Kept)
	}
}

type pageStates struct {
	present int
	own     []int // the pages that are the process's own, by index
}

func states(t *testing.T, pagemap *os.File, m Mapping) pageStates {
	t.Helper()
	pages, err := ReadPagemap(pagemap, m, os.Getpagesize(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var s pageStates
	for i, p := range pages {
		if p.Present() {
			s.present++
		}
		if p.Own() {
			s.own = append(s.own, i)
		}
	}
	return s
}

// mappingOf finds mem's line in /proc/self/maps.
func mappingOf(t *testing.T, mem []byte) Mapping {
	t.Helper()
	start := uint64(uintptrOf(mem))
	for _, m := range selfMaps(t) {
		if m.Start == start {
			return m
		}
	}
	t.Fatalf("%#x is not in /proc/self/maps", start)
	return Mapping{}
}

func selfMaps(t *testing.T) []Mapping {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	maps, err := ParseMaps(f)
	if err != nil {
		t.Fatal(err)
	}
	return maps
}

// programResident counts the resident pages of the test binary's
// read-only mappings.
func programResident(t *testing.T) int {
	t.Helper()
	maps, err := ProgramMappings("self")
	if err != nil {
		t.Fatal(err)
	}
	var readOnly []Mapping
	for _, m := range maps {
		if !m.Writable {
			readOnly = append(readOnly, m)
		}
	}
	present, err := PresentPages("self", readOnly)
	if err != nil {
		t.Fatal(err)
	}
	return len(present)
}

// uintptrOf is the address of b's first byte.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// BenchmarkTrim is what the dashboard pays each minute to let go of its
// program's pages (cmd/bondtop's giveBackMemory, with a forced
// collection beside it): reading its maps and pagemap, and the madvise
// calls. The loop maps back what it runs between two trims, as the
// dashboard does between two minutes.
func BenchmarkTrim(b *testing.B) {
	for b.Loop() {
		if _, err := Trim(); err != nil {
			b.Fatal(err)
		}
	}
}
