package intent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/bondtop/bondtop/internal/filekind"
)

// The directories each system's files are read from, relative to the
// root. NetworkManager and networkd files under /run are netplan's
// output, read through netplan's own YAML instead.
const (
	netplanDir  = "etc/netplan"
	nmDir       = "etc/NetworkManager/system-connections"
	networkdDir = "etc/systemd/network"
	ifcfgDir    = "etc/sysconfig/network-scripts"
	ifupdownTop = "etc/network/interfaces"
)

// Read finds and parses every system's files under fsys, a host's root
// ("/" live, or a support bundle): each system's bonds, in the order
// netplan, NetworkManager, networkd, ifcfg, ifupdown. Files that exist
// but cannot be read go into Notes; nothing is guessed from them.
func Read(fsys fs.FS) Config {
	var c Config
	if st, err := fs.Stat(fsys, "etc"); err != nil || !st.IsDir() {
		return c
	}
	c.Checked = true
	add := func(bonds []Bond, warnings []string) {
		c.Bonds = append(c.Bonds, bonds...)
		c.Warnings = append(c.Warnings, warnings...)
	}
	var np []File
	for _, dir := range []string{"lib/netplan", netplanDir, "run/netplan"} {
		np = append(np, c.readDir(fsys, dir, func(n string) bool { return strings.HasSuffix(n, ".yaml") })...)
	}
	add(ParseNetplan(netplanOrder(np)))
	add(ParseNMKeyfiles(c.readDir(fsys, nmDir, func(n string) bool { return strings.HasSuffix(n, ".nmconnection") })))
	add(ParseNetworkd(networkdOrder(c.readDir(fsys, networkdDir, func(n string) bool {
		return strings.HasSuffix(n, ".netdev") || strings.HasSuffix(n, ".network")
	}))))
	add(ParseIfcfg(c.readDir(fsys, ifcfgDir, func(n string) bool {
		// initscripts skip backups and the package manager's leftovers.
		return strings.HasPrefix(n, "ifcfg-") && n != "ifcfg-lo" && !strings.HasSuffix(n, "~") &&
			!slices.ContainsFunc([]string{".bak", ".orig", ".rpmnew", ".rpmorig", ".rpmsave"}, func(s string) bool { return strings.HasSuffix(n, s) })
	})))
	add(ParseIfupdown(c.readIfupdown(fsys)))
	slices.SortStableFunc(c.Bonds, func(a, b Bond) int { return strings.Compare(a.Name, b.Name) })
	return c
}

// readDir reads the files of dir whose names keep says, sorted by name;
// an absent dir is nothing, an unreadable one or file a note.
func (c *Config) readDir(fsys fs.FS, dir string, keep func(string) bool) []File {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.note(dir, err)
		}
		return nil
	}
	var out []File
	for _, e := range entries {
		if e.IsDir() || !keep(e.Name()) {
			continue
		}
		if f, ok := c.readFile(fsys, path.Join(dir, e.Name())); ok {
			out = append(out, f)
		}
	}
	return out
}

// maxConfigFile bounds one configuration file: real ones are a few kB.
const maxConfigFile = 1 << 20

// readFile reads one configuration file: a regular file (a FIFO would
// block, a device never end; the type is checked before the open and on
// the open file) of at most maxConfigFile bytes. Anything else is a note.
func (c *Config) readFile(fsys fs.FS, name string) (File, bool) {
	data, err := readRegular(fsys, name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.note(name, err)
		}
		return File{}, false
	}
	return File{Path: "/" + name, Data: data}, true
}

func readRegular(fsys fs.FS, name string) ([]byte, error) {
	regular := func(st fs.FileInfo) error {
		switch {
		case !st.Mode().IsRegular():
			return &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("not a regular file (%s)", filekind.Of(st.Mode()))}
		case st.Size() > maxConfigFile:
			return &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("over %d bytes", maxConfigFile)}
		}
		return nil
	}
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := regular(st); err != nil {
		return nil, err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regular(st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigFile {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("over %d bytes", maxConfigFile)}
	}
	return data, nil
}

func (c *Config) note(name string, err error) {
	why := err.Error()
	if errors.Is(err, fs.ErrPermission) {
		why = "permission denied; run as root to compare the bonds with it"
	} else if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		why = pe.Err.Error()
	}
	c.Notes = append(c.Notes, fmt.Sprintf("/%s: not read (%s)", name, why))
}

// readIfupdown reads /etc/network/interfaces and what it sources,
// each file once, in the order ifupdown reads them.
func (c *Config) readIfupdown(fsys fs.FS) []File {
	top, ok := c.readFile(fsys, ifupdownTop)
	if !ok {
		return nil
	}
	files := []File{top}
	seen := map[string]bool{top.Path: true}
	for i := 0; i < len(files) && len(files) < 256; i++ {
		for _, pat := range IfupdownSources(files[i]) {
			matches, err := fs.Glob(fsys, strings.TrimPrefix(path.Clean(pat), "/"))
			if err != nil {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: source %s: %v", files[i].Path, pat, err))
				continue
			}
			slices.Sort(matches)
			for _, m := range matches {
				// source-directory takes names of letters, digits, _ and -.
				if strings.HasSuffix(pat, "/*") && strings.ContainsAny(path.Base(m), ".~") {
					continue
				}
				if seen["/"+m] {
					continue
				}
				seen["/"+m] = true
				if st, err := fs.Stat(fsys, m); err == nil && st.IsDir() {
					continue
				}
				if f, ok := c.readFile(fsys, m); ok {
					files = append(files, f)
				}
			}
		}
	}
	return files
}
