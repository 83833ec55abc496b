// Package programpages owns what a process can learn and do about its own
// program's pages in memory: the mappings in /proc/PID/maps, the state of
// each page in /proc/PID/pagemap, and (Trim, Linux) letting go of the
// program's file pages so that only those it runs again come back.
//
// A Go program's resident set counts the pages of its executable that are
// mapped into it, and package initialisation touches code in every package
// linked: the kernel then maps 64 kB around each page first touched. A
// dashboard that runs a fraction of that code afterwards keeps all of it
// resident, several megabytes that start-up alone used (README, "Lighter
// than bmon", step 28).
package programpages

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64 // the address range, End excluded
	Readable   bool
	Writable   bool
	Executable bool
	Private    bool   // copy-on-write; false for a shared mapping
	Path       string // the file mapped, a pseudo-path such as [heap], or ""
}

// ParseMaps reads the text of /proc/PID/maps. A line is
//
//	start-end perms offset dev inode [path]
//
// where the path, if any, follows the inode after spaces that pad it, and
// may itself hold spaces (and end in " (deleted)" when the file is gone).
func ParseMaps(r io.Reader) ([]Mapping, error) {
	text, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("maps: %w", err)
	}
	var out []Mapping
	n := 0
	for line := range strings.Lines(string(text)) {
		n++
		m, err := parseMapsLine(strings.TrimSuffix(line, "\n"))
		if err != nil {
			return nil, fmt.Errorf("maps line %d: %w", n, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func parseMapsLine(line string) (Mapping, error) {
	var m Mapping
	rest := line
	var field [5]string
	for i := range field {
		rest = strings.TrimLeft(rest, " ")
		end := strings.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		field[i], rest = rest[:end], rest[end:]
		if field[i] == "" {
			return m, fmt.Errorf("%q: %d fields, want at least 5", line, i)
		}
	}
	lo, hi, ok := strings.Cut(field[0], "-")
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if !ok || err1 != nil || err2 != nil || end < start {
		return m, fmt.Errorf("%q: bad address range %q", line, field[0])
	}
	perms := field[1]
	if len(perms) != 4 ||
		!strings.ContainsRune("r-", rune(perms[0])) || !strings.ContainsRune("w-", rune(perms[1])) ||
		!strings.ContainsRune("x-", rune(perms[2])) || !strings.ContainsRune("ps", rune(perms[3])) {
		return m, fmt.Errorf("%q: bad permissions %q", line, perms)
	}
	m.Start, m.End = start, end
	m.Readable, m.Writable, m.Executable, m.Private = perms[0] == 'r', perms[1] == 'w', perms[2] == 'x', perms[3] == 'p'
	m.Path = strings.TrimLeft(rest, " ")
	return m, nil
}

// ProgramMappings returns the mappings of the executable that process pid
// runs ("self" for this one), as /proc/PID/exe names it; its read-only
// ones are its code and read-only data.
func ProgramMappings(pid string) ([]Mapping, error) {
	exe, err := os.Readlink("/proc/" + pid + "/exe")
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/" + pid + "/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	maps, err := ParseMaps(f)
	if err != nil {
		return nil, err
	}
	var out []Mapping
	for _, m := range maps {
		if m.Path == exe {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/proc/%s/maps has no mapping of %s", pid, exe)
	}
	return out, nil
}

// Page is a page's entry in /proc/PID/pagemap, read for its flags: the
// frame number in the low bits is zero unless the reader has
// CAP_SYS_ADMIN, and nothing here needs it.
type Page uint64

// Present: the page is in memory and mapped here.
func (p Page) Present() bool { return p>>63&1 == 1 }

// Swapped: the page is in swap, so it held the process's own data.
func (p Page) Swapped() bool { return p>>62&1 == 1 }

// File: the page is a file's page (from the page cache) or shared
// anonymous memory. A private mapping's page that was written, a
// debugger's breakpoint or a uprobe, is anonymous: not File.
func (p Page) File() bool { return p>>61&1 == 1 }

// Own: the page holds something that exists only in this process's memory
// (present or swapped, and not a file's page): dropping its mapping would
// lose it.
func (p Page) Own() bool { return (p.Present() || p.Swapped()) && !p.File() }

// ReadPagemap reads the entries of m's pages from pagemap (an open
// /proc/PID/pagemap) into pages, grown as needed, and returns them.
func ReadPagemap(pagemap io.ReaderAt, m Mapping, pageSize int, pages []Page) ([]Page, error) {
	ps := uint64(pageSize)
	if ps == 0 || m.Start%ps != 0 || m.End%ps != 0 {
		return pages, fmt.Errorf("pagemap: %#x-%#x is not in pages of %d bytes", m.Start, m.End, pageSize)
	}
	n := int((m.End - m.Start) / ps)
	buf := make([]byte, 8*n)
	if _, err := pagemap.ReadAt(buf, int64(m.Start/ps*8)); err != nil {
		return pages, fmt.Errorf("pagemap %#x-%#x: %w", m.Start, m.End, err)
	}
	pages = pages[:0]
	for i := range n {
		pages = append(pages, Page(binary.LittleEndian.Uint64(buf[8*i:])))
	}
	return pages, nil
}

// PresentPages reads process pid's pagemap ("self" for this one) for
// maps: the addresses of their pages that are in memory and mapped there.
func PresentPages(pid string, maps []Mapping) (map[uint64]bool, error) {
	f, err := os.Open("/proc/" + pid + "/pagemap")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := os.Getpagesize()
	present := make(map[uint64]bool)
	var pages []Page
	for _, m := range maps {
		if pages, err = ReadPagemap(f, m, size, pages); err != nil {
			return nil, err
		}
		for i, p := range pages {
			if p.Present() {
				present[m.Start+uint64(i*size)] = true
			}
		}
	}
	return present, nil
}
