package intent

import (
	"bufio"
	"bytes"
	"strings"
)

// iniEntry is one key=value line of an INI-style file (NetworkManager
// keyfiles, systemd units), with its section and 1-based line.
type iniEntry struct {
	section, key, value string
	line                int
}

// parseINI splits an INI-style file into entries. Comments start with #
// or ; at the start of a line; keys may repeat (systemd lists). Lines that
// are neither a section, a key=value nor a comment are returned as bad
// line numbers.
func parseINI(data []byte) (entries []iniEntry, bad []int) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	section := ""
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			if !strings.HasSuffix(line, "]") {
				bad = append(bad, n)
				continue
			}
			section = strings.TrimSpace(line[1 : len(line)-1])
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || strings.TrimSpace(k) == "" {
				bad = append(bad, n)
				continue
			}
			entries = append(entries, iniEntry{section, strings.TrimSpace(k), strings.TrimSpace(v), n})
		}
	}
	if sc.Err() != nil {
		bad = append(bad, -1)
	}
	return entries, bad
}
