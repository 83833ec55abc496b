// Package dirstate describes a directory's entries in one string, for
// tests that check a command left files exactly as they were (names,
// types, modes, link targets, contents).
package dirstate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Describe lists every entry of dir, one a line: name, type and mode, the
// target of a symbolic link, and the quoted content of a regular file.
func Describe(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		st, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		b.WriteString(e.Name() + " " + st.Mode().String())
		if st.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return "", err
			}
			b.WriteString(" " + strconv.Quote(string(data)))
		}
		if target, err := os.Readlink(p); err == nil {
			b.WriteString(" -> " + target)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
