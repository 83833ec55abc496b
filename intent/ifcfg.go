package intent

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"
)

// shellVar is one NAME=value line of a shell-style file, unquoted.
type shellVar struct {
	name, value string
	line        int
}

// parseShellVars reads NAME=value assignments as initscripts source
// them: values bare, 'single' or "double" quoted (with \" and \\ in
// double quotes), comments from # at the start of a line or after a
// blank. Lines that are not assignments are returned as bad.
func parseShellVars(data []byte) (vars []shellVar, bad []int) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		name, rest, ok := strings.Cut(line, "=")
		if !ok || name == "" || strings.ContainsAny(name, " \t\"'") {
			bad = append(bad, n)
			continue
		}
		value, ok := shellWord(rest)
		if !ok {
			bad = append(bad, n)
			continue
		}
		vars = append(vars, shellVar{name, value, n})
	}
	return vars, bad
}

// shellWord unquotes the value of an assignment up to an unquoted blank
// or comment; ok is false for an unterminated quote.
func shellWord(s string) (string, bool) {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t':
			return sb.String(), true
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", false
			}
			sb.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				sb.WriteByte(s[i])
			}
			if i >= len(s) {
				return "", false
			}
		case '\\':
			if i+1 < len(s) {
				i++
				sb.WriteByte(s[i])
			}
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String(), true
}

// ParseIfcfg reads Red Hat ifcfg files (ifcfg-NAME, as initscripts and
// NetworkManager's ifcfg-rh plugin use them): a bond is a file with
// TYPE=Bond or BONDING_MASTER=yes (or BONDING_OPTS), named by DEVICE=
// (else the file's suffix), its options in BONDING_OPTS="mode=4
// miimon=100 ..." (the kernel's names), MTU= its MTU; a slave is a file
// with MASTER=BOND (or NetworkManager's MASTER_UUID=) and SLAVE=yes.
func ParseIfcfg(files []File) ([]Bond, []string) {
	type ifcfg struct {
		file   string
		vars   map[string]shellVar
		device string
	}
	var all []ifcfg
	var warnings []string
	for _, f := range files {
		vars, bad := parseShellVars(f.Data)
		for _, n := range bad {
			warnings = append(warnings, fmt.Sprintf("%s: not a NAME=value line", Loc{f.Path, n}))
		}
		c := ifcfg{file: f.Path, vars: map[string]shellVar{}}
		for _, v := range vars {
			c.vars[v.name] = v
		}
		c.device = strings.TrimPrefix(path.Base(f.Path), "ifcfg-")
		if d, ok := c.vars["DEVICE"]; ok && d.value != "" {
			c.device = d.value
		}
		all = append(all, c)
	}
	yes := func(v string) bool { return strings.EqualFold(v, "yes") || strings.EqualFold(v, "true") || v == "1" }
	var out []Bond
	for _, c := range all {
		_, hasOpts := c.vars["BONDING_OPTS"]
		if !strings.EqualFold(c.vars["TYPE"].value, "bond") && !yes(c.vars["BONDING_MASTER"].value) && !hasOpts {
			continue
		}
		at := Loc{c.file, 0}
		if t, ok := c.vars["TYPE"]; ok {
			at.Line = t.line
		}
		b := newBond(c.device, SourceIfcfg, at)
		if o, ok := c.vars["BONDING_OPTS"]; ok {
			for _, kv := range strings.Fields(o.value) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					warnings = append(warnings, fmt.Sprintf("%s: BONDING_OPTS %q is not option=value", Loc{c.file, o.line}, kv))
					continue
				}
				if k == "arp_ip_target" {
					if old, ok := b.Options[k]; ok {
						v = old + " " + v
					}
				}
				if err := b.set(k, v, Loc{c.file, o.line}); err != nil {
					warnings = append(warnings, fmt.Sprintf("%s: %v", Loc{c.file, o.line}, err))
				}
			}
		}
		if m, ok := c.vars["MTU"]; ok {
			if err := b.setMTU(m.value, Loc{c.file, m.line}); err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: %v", Loc{c.file, m.line}, err))
			}
		}
		uuid := c.vars["UUID"].value
		for _, s := range all {
			m, ok := s.vars["MASTER"]
			if mu, has := s.vars["MASTER_UUID"]; has && uuid != "" && mu.value == uuid {
				m, ok = mu, true // NetworkManager's ifcfg-rh names the bond by UUID
			} else if !ok || m.value != c.device {
				continue
			}
			if sl, ok := s.vars["SLAVE"]; ok && !yes(sl.value) {
				continue
			}
			b.addSlave(s.device, Loc{s.file, m.line})
		}
		out = append(out, *b)
	}
	return out, warnings
}
