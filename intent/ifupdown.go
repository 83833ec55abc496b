package intent

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"
)

// ifupdownNames maps ifupdown2's own spellings to the kernel's options;
// every other bond-x-y option is the kernel's x_y.
var ifupdownNames = map[string]string{
	"ad_sys_priority":   "ad_actor_sys_prio",
	"ad_sys_mac_addr":   "ad_actor_system",
	"ad_actor_sys_prio": "ad_actor_sys_prio",
	"ad_actor_system":   "ad_actor_system",
	"lacp_rate":         "lacp_rate",
}

// ifupdownIgnored are bond- options that are not kernel bond options.
var ifupdownIgnored = map[string]bool{
	"give_a_chance": true, "queue_id": true, "lacp_bypass_allow": true, "clag_id": true,
}

// ifupdownLine is one logical line (continuations joined) with its file
// and first line number.
type ifupdownLine struct {
	words []string
	at    Loc
}

// ifupdownLines splits a file into logical lines: comments dropped,
// backslash continuations joined.
func ifupdownLines(f File) []ifupdownLine {
	var out []ifupdownLine
	sc := bufio.NewScanner(bytes.NewReader(f.Data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var cur strings.Builder
	start := 0
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if cur.Len() == 0 {
			start = n
			if t := strings.TrimSpace(line); t == "" || t[0] == '#' {
				continue
			}
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		if w := strings.Fields(cur.String()); len(w) > 0 {
			out = append(out, ifupdownLine{w, Loc{f.Path, start}})
		}
		cur.Reset()
	}
	if w := strings.Fields(cur.String()); len(w) > 0 {
		out = append(out, ifupdownLine{w, Loc{f.Path, start}})
	}
	return out
}

// IfupdownSources lists the patterns a file's source and
// source-directory lines include, relative ones resolved against the
// file's directory, directories as DIR/* (ifupdown then skips names
// with dots; the reader does too).
func IfupdownSources(f File) []string {
	var out []string
	for _, l := range ifupdownLines(f) {
		if len(l.words) < 2 {
			continue
		}
		p := l.words[1]
		if !path.IsAbs(p) {
			p = path.Join(path.Dir(f.Path), p)
		}
		switch l.words[0] {
		case "source":
			out = append(out, p)
		case "source-directory", "source-dir":
			out = append(out, p+"/*")
		}
	}
	return out
}

// ParseIfupdown reads Debian's /etc/network/interfaces and the files it
// sources, as one configuration in the order given: an iface stanza with
// bond-slaves (or ifenslave's slaves) or any bond-* option other than
// bond-master is a bond, its bond-x-y options the kernel's x_y (plus
// ifupdown2's bond-ad-sys-priority and bond-ad-sys-mac-addr), mtu its
// MTU; an iface with bond-master NAME is a slave of NAME.
func ParseIfupdown(files []File) ([]Bond, []string) {
	type stanza struct {
		name    string
		at      Loc
		options []ifupdownLine
	}
	var stanzas []*stanza
	var warnings []string
	var cur *stanza
	for _, f := range files {
		for _, l := range ifupdownLines(f) {
			switch l.words[0] {
			case "iface":
				if len(l.words) < 2 {
					warnings = append(warnings, fmt.Sprintf("%s: iface without a name", l.at))
					cur = nil
					continue
				}
				cur = &stanza{name: l.words[1], at: l.at}
				stanzas = append(stanzas, cur)
			case "auto", "mapping", "source", "source-directory", "source-dir", "rename":
				cur = nil
			default:
				if strings.HasPrefix(l.words[0], "allow-") {
					cur = nil
					continue
				}
				if cur != nil {
					cur.options = append(cur.options, l)
				}
			}
		}
	}
	var order []string
	bonds := map[string]*Bond{}
	bond := func(name string, at Loc) *Bond {
		b := bonds[name]
		if b == nil {
			b = newBond(name, SourceIfupdown, at)
			bonds[name] = b
			order = append(order, name)
		}
		return b
	}
	type slaveOf struct {
		slave, bond string
		at          Loc
	}
	var slaveLines []slaveOf
	for _, s := range stanzas {
		for _, l := range s.options {
			key := strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(l.words[0], "bond-"), "bond_"), "-", "_")
			isBond := strings.HasPrefix(l.words[0], "bond-") || strings.HasPrefix(l.words[0], "bond_") || l.words[0] == "slaves"
			args := l.words[1:]
			switch {
			case !isBond: // address, mtu (below, once the stanza is known to be a bond)
			case key == "master":
				if len(args) == 1 {
					slaveLines = append(slaveLines, slaveOf{s.name, args[0], l.at})
				}
			case key == "slaves" || key == "ports":
				b := bond(s.name, s.at)
				for _, a := range args {
					if a != "none" {
						b.addSlave(a, l.at)
					}
				}
				if b.SlavesAt.File == "" {
					b.SlavesAt = l.at
				}
			case ifupdownIgnored[key]:
			default:
				b := bond(s.name, s.at)
				opt := key
				if o, ok := ifupdownNames[key]; ok {
					opt = o
				}
				value := strings.Join(args, " ")
				if opt == "arp_ip_target" {
					if old, ok := b.Options[opt]; ok {
						value = old + " " + value
					}
				}
				if err := b.set(opt, value, l.at); err != nil {
					warnings = append(warnings, fmt.Sprintf("%s: %s: %v", l.at, l.words[0], err))
				}
			}
		}
		// mtu may come before the bond- lines: read it once the stanza
		// is known to be a bond.
		if b := bonds[s.name]; b != nil && b.MTU == nil {
			for _, l := range s.options {
				if l.words[0] == "mtu" && len(l.words) == 2 {
					if err := b.setMTU(l.words[1], l.at); err != nil {
						warnings = append(warnings, fmt.Sprintf("%s: %v", l.at, err))
					}
				}
			}
		}
	}
	for _, sl := range slaveLines {
		b := bonds[sl.bond]
		if b == nil {
			b = bond(sl.bond, sl.at)
		}
		b.addSlave(sl.slave, sl.at)
	}
	out := make([]Bond, 0, len(order))
	for _, n := range order {
		out = append(out, *bonds[n])
	}
	return out, warnings
}
