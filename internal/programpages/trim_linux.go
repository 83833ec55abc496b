//go:build linux

package programpages

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Trim unmaps from this process the pages of its own executable that are
// mapped read-only: code, read-only data, the tables the runtime unwinds
// stacks with. They stay in the page cache, clean and shared, and the
// next touch of one maps it back (a minor fault), so what remains mapped
// is what the program still runs. The process's resident set loses the
// pages that only start-up used, and the kernel can reclaim them first
// when memory is short, whereas the mapped code of a running program is
// what it keeps longest.
//
// Only private mappings that cannot be written are touched: their pages
// are the file's, identical to what a fault reads back. A page in them
// that is the process's own (a debugger's breakpoint or a uprobe wrote
// it) stays mapped, since unmapping it would lose the write.
//
// Call it once the program has settled: what runs after it is mapped
// again as it runs.
func Trim() (Trimmed, error) {
	maps, err := ProgramMappings("self")
	if err != nil {
		return Trimmed{}, err
	}
	var ranges []Mapping
	for _, m := range maps {
		if m.Private && !m.Writable {
			ranges = append(ranges, m)
		}
	}
	if len(ranges) == 0 {
		return Trimmed{}, errors.New("the program has no read-only mapping in /proc/self/maps")
	}
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return Trimmed{}, err
	}
	defer pagemap.Close()
	return trim(pagemap, ranges, os.Getpagesize())
}

// trim unmaps the pages of ranges that are not the process's own, in runs
// between those that are: pagemap says which is which.
func trim(pagemap io.ReaderAt, ranges []Mapping, pageSize int) (Trimmed, error) {
	var t Trimmed
	var pages []Page
	for _, m := range ranges {
		var err error
		if pages, err = ReadPagemap(pagemap, m, pageSize, pages); err != nil {
			return t, err
		}
		run := -1 // the first page of the run to unmap, if any
		unmap := func(end int) error {
			if run < 0 {
				return nil
			}
			start := m.Start + uint64(run*pageSize)
			length := uint64((end - run) * pageSize)
			run = -1
			if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(length), unix.MADV_DONTNEED); errno != 0 {
				return fmt.Errorf("madvise %#x+%d: %w", start, length, errno)
			}
			return nil
		}
		for i, p := range pages {
			if p.Own() {
				t.Kept++
				if err := unmap(i); err != nil {
					return t, err
				}
				continue
			}
			if p.Present() {
				t.Unmapped++
			}
			if run < 0 {
				run = i
			}
		}
		if err := unmap(len(pages)); err != nil {
			return t, err
		}
	}
	return t, nil
}
