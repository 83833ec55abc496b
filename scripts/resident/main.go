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
	"debug/elf"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/bondtop/bondtop/internal/programpages"
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

func run(pid string) error {
	exe, err := os.Readlink("/proc/" + pid + "/exe")
	if err != nil {
		return err
	}
	maps, err := programpages.ProgramMappings(pid)
	if err != nil {
		return err
	}
	present, err := programpages.PresentPages(pid, maps)
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
