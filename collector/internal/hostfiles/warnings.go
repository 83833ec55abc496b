package hostfiles

import "fmt"

// MaxWarningsPerFile bounds the warnings one file adds to a reading: a
// file of thousands of garbled lines says so in a few lines, not in
// thousands every tick.
const MaxWarningsPerFile = 5

// GarbledWarnings turns the garbled lines of a procfs file into warnings
// that name the file; the fields those lines held are nil.
func GarbledWarnings(file string, garbled []string) []string {
	if len(garbled) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(garbled), MaxWarningsPerFile+1))
	for _, line := range garbled[:min(len(garbled), MaxWarningsPerFile)] {
		out = append(out, fmt.Sprintf("%s: cannot parse %q (that field is left empty)", file, line))
	}
	return append(out, moreWarnings(file, len(garbled))...)
}

// CapWarnings keeps the first MaxWarningsPerFile warnings about file and
// counts the rest.
func CapWarnings(file string, ws []string) []string {
	if len(ws) <= MaxWarningsPerFile {
		return ws
	}
	return append(ws[:MaxWarningsPerFile:MaxWarningsPerFile], moreWarnings(file, len(ws))...)
}

// moreWarnings is the line that stands for the warnings past the cap.
func moreWarnings(file string, n int) []string {
	if n <= MaxWarningsPerFile {
		return nil
	}
	return []string{fmt.Sprintf("%s: %d more lines like these (not shown)", file, n-MaxWarningsPerFile)}
}
