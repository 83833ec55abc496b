// Command resident tells where a running program's resident memory is:
// for each section of its executable that is loaded (code, read-only
// data, the pc-line table, data), the kilobytes mapped and the kilobytes
// resident in the process, from /proc/PID/maps and the present bit of
// /proc/PID/pagemap; then the process's anonymous memory (heap, stacks)
// from /proc/PID/smaps_rollup. Linux only; the process must be this
// user's (or run it as root).
//
//	go run ./scripts/resident PID
//
// The kernel maps a program's file pages 64 kB around each page first
// touched (fault-around), so a section is resident about as far as code
// anywhere in each 64 kB of it ran: package initialisation alone runs
// code spread over the whole text. scripts/measure-top.sh's RSS column
// is this file part plus the anonymous part.
package main

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: resident PID")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "resident:", err)
		os.Exit(1)
	}
}

// mapping is one line of /proc/PID/maps backed by the executable.
type mapping struct{ start, end uint64 }

func run(pid string) error {
	exe, err := os.Readlink("/proc/" + pid + "/exe")
	if err != nil {
		return err
	}
	maps, err := exeMappings(pid, exe)
	if err != nil {
		return err
	}
	present, err := presentPages(pid, maps)
	if err != nil {
		return err
	}
	f, err := elf.Open("/proc/" + pid + "/exe")
	if err != nil {
		return err
	}
	defer f.Close()
	page := uint64(os.Getpagesize())
	fmt.Printf("%s (pid %s)\n%-14s %10s %12s\n", exe, pid, "section", "size kB", "resident kB")
	var total uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || s.Size < 16<<10 {
			continue // not loaded, zero-filled (.bss is anonymous), or small
		}
		var kb uint64
		for p := s.Addr &^ (page - 1); p < s.Addr+s.Size; p += page {
			if present[p] {
				kb += page >> 10
			}
		}
		total += kb
		fmt.Printf("%-14s %10d %12d\n", s.Name, s.Size>>10, kb)
	}
	fmt.Printf("%-14s %10s %12d\n", "program", "", total)
	anon, err := rollup(pid, "Anonymous")
	if err != nil {
		return err
	}
	fmt.Printf("%-14s %10s %12d\n", "anonymous", "", anon)
	return nil
}

// exeMappings returns the address ranges mapped from exe.
func exeMappings(pid, exe string) ([]mapping, error) {
	f, err := os.Open("/proc/" + pid + "/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("maps: bad range %q", fields[0])
		}
		out = append(out, mapping{start, end})
	}
	return out, sc.Err()
}

// presentPages reads pagemap for maps: bit 63 of each page's entry says
// the page is in memory (readable without privilege; the frame number is
// not needed).
func presentPages(pid string, maps []mapping) (map[uint64]bool, error) {
	f, err := os.Open("/proc/" + pid + "/pagemap")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	page := uint64(os.Getpagesize())
	present := make(map[uint64]bool)
	for _, m := range maps {
		n := (m.end - m.start) / page
		buf := make([]byte, n*8)
		if _, err := f.ReadAt(buf, int64(m.start/page*8)); err != nil {
			return nil, fmt.Errorf("pagemap: %w", err)
		}
		for i := range n {
			if binary.LittleEndian.Uint64(buf[i*8:])>>63 == 1 {
				present[m.start+i*page] = true
			}
		}
	}
	return present, nil
}

// rollup returns a field of /proc/PID/smaps_rollup, in kB.
func rollup(pid, field string) (uint64, error) {
	b, err := os.ReadFile("/proc/" + pid + "/smaps_rollup")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("smaps_rollup: no %s", field)
}
