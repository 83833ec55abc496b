package intent

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// File is one configuration file: its path as the host sees it and its
// content.
type File struct {
	Path string
	Data []byte
}

// netplanParams maps netplan's bond parameters to the kernel's options.
// Netplan renamed slave to member in 0.106; both spellings are read, as is
// its long-standing misspelling gratuitious-arp.
var netplanParams = map[string]string{
	"mode":                    "mode",
	"lacp-rate":               "lacp_rate",
	"mii-monitor-interval":    "miimon",
	"min-links":               "min_links",
	"transmit-hash-policy":    "xmit_hash_policy",
	"ad-select":               "ad_select",
	"all-slaves-active":       "all_slaves_active",
	"all-members-active":      "all_slaves_active",
	"arp-interval":            "arp_interval",
	"arp-ip-targets":          "arp_ip_target",
	"arp-validate":            "arp_validate",
	"arp-all-targets":         "arp_all_targets",
	"up-delay":                "updelay",
	"down-delay":              "downdelay",
	"fail-over-mac-policy":    "fail_over_mac",
	"gratuitous-arp":          "num_grat_arp",
	"gratuitious-arp":         "num_grat_arp",
	"packets-per-slave":       "packets_per_slave",
	"packets-per-member":      "packets_per_slave",
	"primary-reselect-policy": "primary_reselect",
	"resend-igmp":             "resend_igmp",
	"learn-packet-interval":   "lp_interval",
	"primary":                 "primary",
}

// netplanTimes are the parameters netplan reads as time spans; a bare
// number is milliseconds, except learn-packet-interval (seconds).
var netplanTimes = map[string]string{
	"miimon": "ms", "arp_interval": "ms", "updelay": "ms", "downdelay": "ms", "lp_interval": "s",
}

// ParseNetplan reads netplan YAML files as netplan does: in the order
// given (sorted by file name, later files amending and overriding earlier
// ones), each bond's parameters in the kernel's words, its interfaces
// resolved to kernel names through the ethernets' set-name and match.name.
// Warnings name what could not be understood (file:line).
func ParseNetplan(files []File) ([]Bond, []string) {
	type ethernet struct{ setName, matchName string }
	eths := map[string]*ethernet{}
	var order []string
	bonds := map[string]*Bond{}
	ids := map[string][]string{}   // bond -> interface IDs as written
	primary := map[string]string{} // bond -> primary ID as written
	var warnings []string
	warn := func(f string, line int, format string, args ...any) {
		warnings = append(warnings, fmt.Sprintf("%s: %s", Loc{f, line}, fmt.Sprintf(format, args...)))
	}
	for _, f := range files {
		var doc yaml.Node
		if err := yaml.Unmarshal(f.Data, &doc); err != nil {
			warn(f.Path, 0, "not YAML netplan can read: %v", err)
			continue
		}
		if len(doc.Content) == 0 {
			continue // empty file
		}
		network := mapGet(doc.Content[0], "network")
		if network == nil {
			continue
		}
		for _, kv := range mapPairs(mapGet(network, "ethernets")) {
			e := eths[kv[0].Value]
			if e == nil {
				e = &ethernet{}
				eths[kv[0].Value] = e
			}
			if n := mapGet(kv[1], "set-name"); n != nil && n.Kind == yaml.ScalarNode {
				e.setName = n.Value
			}
			if n := mapGet(mapGet(kv[1], "match"), "name"); n != nil && n.Kind == yaml.ScalarNode {
				e.matchName = n.Value
			}
		}
		for _, kv := range mapPairs(mapGet(network, "bonds")) {
			name, def := kv[0].Value, kv[1]
			if name == "" || kv[0].Kind != yaml.ScalarNode {
				warn(f.Path, kv[0].Line, "a bond without a name")
				continue
			}
			b := bonds[name]
			if b == nil {
				b = newBond(name, SourceNetplan, Loc{f.Path, kv[0].Line})
				bonds[name] = b
				order = append(order, name)
			}
			b.addFile(f.Path)
			if n := mapGet(def, "interfaces"); n != nil {
				if n.Kind != yaml.SequenceNode {
					warn(f.Path, n.Line, "bond %s: interfaces is not a list", name)
				}
				for _, i := range n.Content {
					if i.Kind == yaml.AliasNode && i.Alias != nil {
						i = i.Alias // "- *eth": the anchored value
					}
					if i.Kind == yaml.ScalarNode && !slices.Contains(ids[name], i.Value) {
						ids[name] = append(ids[name], i.Value)
					}
				}
				if b.SlavesAt.File == "" {
					b.SlavesAt = Loc{f.Path, n.Line}
				}
			}
			if n := mapGet(def, "mtu"); n != nil {
				if err := b.setMTU(n.Value, Loc{f.Path, n.Line}); err != nil {
					warn(f.Path, n.Line, "bond %s: %v", name, err)
				}
			}
			for _, p := range mapPairs(mapGet(def, "parameters")) {
				key, val := p[0].Value, p[1]
				opt, ok := netplanParams[key]
				if !ok {
					warn(f.Path, p[0].Line, "bond %s: unknown parameter %q", name, key)
					continue
				}
				at := Loc{f.Path, p[0].Line}
				var value string
				switch {
				case opt == "arp_ip_target" && val.Kind == yaml.SequenceNode:
					var ts []string
					for _, t := range val.Content {
						ts = append(ts, t.Value)
					}
					value = strings.Join(ts, " ")
				case opt == "primary":
					primary[name] = val.Value
					b.OptionAt[opt] = at
					continue
				case netplanTimes[opt] != "":
					ms, err := timeMillis(val.Value, netplanTimes[opt])
					if err != nil {
						warn(f.Path, p[0].Line, "bond %s: %s: %v", name, key, err)
						continue
					}
					if opt == "lp_interval" {
						ms /= 1000
					}
					value = strconv.FormatInt(ms, 10)
				default:
					value = val.Value
				}
				if err := b.set(opt, value, at); err != nil {
					warn(f.Path, p[0].Line, "bond %s: %s: %v", name, key, err)
				}
			}
		}
	}
	kernelName := func(id string) string {
		if e := eths[id]; e != nil {
			if e.setName != "" {
				return e.setName
			}
			if e.matchName != "" && !strings.ContainsAny(e.matchName, "*?[") {
				return e.matchName
			}
		}
		return id
	}
	out := make([]Bond, 0, len(order))
	for _, name := range order {
		b := bonds[name]
		for _, id := range ids[name] {
			k := kernelName(id)
			if err := checkIfName(k); err != nil {
				warn(b.SlavesAt.File, b.SlavesAt.Line, "bond %s: interface %q: %v", name, id, err)
				continue
			}
			b.addSlave(k, b.SlavesAt)
		}
		if p, ok := primary[name]; ok {
			k := kernelName(p)
			if err := checkIfName(k); err != nil {
				at := b.OptionAt["primary"]
				warn(at.File, at.Line, "bond %s: primary %q: %v", name, p, err)
				delete(b.OptionAt, "primary")
			} else {
				b.Options["primary"] = k
			}
		}
		out = append(out, *b)
	}
	return out, warnings
}

// checkIfName says why the kernel would refuse name as an interface name
// (dev_valid_name): empty, "." or "..", or holding a slash, a colon or
// white space. An empty YAML value (a bare "-", an anchor with nothing
// after it) must not become a slave without a name.
func checkIfName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty interface name")
	case name == "." || name == "..":
		return fmt.Errorf("not an interface name")
	case strings.ContainsFunc(name, func(r rune) bool {
		return r == '/' || r == ':' || r < 0x21 || r == 0x7f || unicode.IsSpace(r)
	}):
		return fmt.Errorf("an interface name holds no slash, colon, white space or control character")
	}
	return nil
}

// mapGet returns the value of key in a YAML mapping, or nil.
func mapGet(m *yaml.Node, key string) *yaml.Node {
	for _, kv := range mapPairs(m) {
		if kv[0].Value == key {
			return kv[1]
		}
	}
	return nil
}

// mapPairs lists a mapping's key/value pairs; nil for anything else.
func mapPairs(m *yaml.Node) [][2]*yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := make([][2]*yaml.Node, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, [2]*yaml.Node{m.Content[i], m.Content[i+1]})
	}
	return out
}

// timeMillis reads a time span ("100", "100ms", "1s", "2min") in
// milliseconds; a bare number is in bareUnit ("ms" or "s").
func timeMillis(v, bareUnit string) (int64, error) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q is not a time span", v)
	}
	n, err := strconv.ParseInt(v[:i], 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a time span", v)
	}
	unit := strings.TrimSpace(v[i:])
	if unit == "" {
		unit = bareUnit
	}
	switch unit {
	case "ms", "msec":
		return n, nil
	case "s", "sec", "second", "seconds":
		return n * 1000, nil
	case "m", "min", "minute", "minutes":
		return n * 60000, nil
	}
	return 0, fmt.Errorf("%q: unknown time unit %q", v, unit)
}

// netplanOrder sorts netplan files as netplan does: by file name across
// /lib, /etc and /run, a name in /run hiding the same name in /etc, and
// /etc hiding /lib.
func netplanOrder(files []File) []File { return byFileName(files, "/run/", "/etc/") }

// byFileName sorts files by base name; of files with the same name, the
// one under the first of the prefixes wins (then the second, then any
// other place).
func byFileName(files []File, prefixes ...string) []File {
	rank := func(p string) int {
		for i, pre := range prefixes {
			if strings.HasPrefix(p, pre) {
				return len(prefixes) - i
			}
		}
		return 0
	}
	byName := map[string]File{}
	for _, f := range files {
		n := path.Base(f.Path)
		if old, ok := byName[n]; !ok || rank(f.Path) > rank(old.Path) {
			byName[n] = f
		}
	}
	out := make([]File, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(path.Base(a.Path), path.Base(b.Path)) })
	return out
}
