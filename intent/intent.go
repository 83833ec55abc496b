package intent

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// The configuration systems, as the JSON names them.
const (
	SourceNetplan        = "netplan"
	SourceNetworkManager = "networkmanager"
	SourceIfcfg          = "ifcfg"
	SourceNetworkd       = "networkd"
	SourceIfupdown       = "ifupdown"
)

// Loc is where a setting was written: a path as the host sees it
// ("/etc/netplan/01-bond.yaml") and a 1-based line (0: the file as a whole).
type Loc struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

func (l Loc) String() string {
	if l.Line == 0 {
		return l.File
	}
	return fmt.Sprintf("%s:%d", l.File, l.Line)
}

// Bond is one bond as a configuration system defines it.
type Bond struct {
	// Name is the kernel interface name the configuration gives the bond.
	Name   string `json:"-"`
	Source string `json:"source"`
	// Files that define the bond or its slaves, in the order read.
	Files []string `json:"files"`
	// Options holds only what the files set, by kernel option name, in
	// the kernel's words (see Canonical); defaults are left to the reader.
	Options map[string]string `json:"options"`
	// Slaves the configuration enslaves, in the order it names them.
	Slaves []string `json:"slaves"`
	MTU    *int     `json:"mtu"`
	// At is where the bond itself is defined; OptionAt, SlavesAt and
	// MTUAt where each setting is (the zero Loc when not set).
	At       Loc            `json:"-"`
	OptionAt map[string]Loc `json:"-"`
	SlavesAt Loc            `json:"-"`
	MTUAt    Loc            `json:"-"`
}

func newBond(name, source string, at Loc) *Bond {
	return &Bond{Name: name, Source: source, Files: []string{at.File}, At: at,
		Options: map[string]string{}, OptionAt: map[string]Loc{}, Slaves: []string{}}
}

// set stores option=value in the kernel's words, or returns why it cannot.
func (b *Bond) set(option, value string, at Loc) error {
	if option == "num_unsol_na" {
		// One kernel setting (num_peer_notif) under two names.
		option = "num_grat_arp"
	}
	v, err := Canonical(option, value)
	if err != nil {
		return err
	}
	b.Options[option] = v
	b.OptionAt[option] = at
	return nil
}

func (b *Bond) addSlave(name string, at Loc) {
	if !slices.Contains(b.Slaves, name) {
		b.Slaves = append(b.Slaves, name)
	}
	if b.SlavesAt.File == "" {
		b.SlavesAt = at
	}
	b.addFile(at.File)
}

func (b *Bond) addFile(f string) {
	if f != "" && !slices.Contains(b.Files, f) {
		b.Files = append(b.Files, f)
	}
}

func (b *Bond) setMTU(value string, at Loc) error {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 68 || n > 65535 {
		return fmt.Errorf("MTU %q is not a number from 68 to 65535", value)
	}
	b.MTU, b.MTUAt = &n, at
	return nil
}

// The kernel's value names of the enumerated options, by numeric value
// (include/net/bond_options.h, bond_options.c).
var enums = map[string][]string{
	"mode":             {"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"},
	"xmit_hash_policy": {"layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4", "vlan+srcmac"},
	"lacp_rate":        {"slow", "fast"},
	"ad_select":        {"stable", "bandwidth", "count"},
	"arp_validate":     {"none", "active", "backup", "all", "filter", "filter_active", "filter_backup"},
	"arp_all_targets":  {"any", "all"},
	"primary_reselect": {"always", "better", "failure"},
	"fail_over_mac":    {"none", "active", "follow"},
	"lacp_active":      {"off", "on"},
}

// numeric lists the options whose value is a plain number (milliseconds
// for the monitors and delays, counts otherwise).
var numeric = map[string]bool{
	"miimon": true, "updelay": true, "downdelay": true, "arp_interval": true,
	"peer_notif_delay": true, "num_grat_arp": true, "num_unsol_na": true,
	"min_links": true, "resend_igmp": true, "packets_per_slave": true,
	"lp_interval": true, "ad_actor_sys_prio": true, "ad_user_port_key": true,
	"all_slaves_active": true, "tlb_dynamic_lb": true, "use_carrier": true,
	"arp_missed_max": true,
}

// booleans are numeric options a tool may write as yes/no or true/false.
var booleans = map[string]bool{"all_slaves_active": true, "tlb_dynamic_lb": true, "use_carrier": true}

// Options lists every option Canonical knows, sorted.
func Options() []string {
	var out []string
	for k := range enums {
		out = append(out, k)
	}
	for k := range numeric {
		out = append(out, k)
	}
	out = append(out, "arp_ip_target", "primary", "ad_actor_system")
	slices.Sort(out)
	return out
}

// Canonical writes value in the kernel's words for option (a kernel
// option name): enumerations by name ("4" and "802.3ad" give "802.3ad";
// sysfs's "802.3ad 4" too), numbers in decimal, ARP targets as addresses
// separated by one space, MACs in lower case. An unknown option or a
// value the kernel would refuse is an error saying so.
func Canonical(option, value string) (string, error) {
	v := strings.TrimSpace(value)
	if names, ok := enums[option]; ok {
		word, _, _ := strings.Cut(v, " ")
		word = strings.ToLower(word)
		if option == "lacp_active" {
			switch word {
			case "yes", "true":
				word = "on"
			case "no", "false":
				word = "off"
			}
		}
		// A word is the common case: Atoi's error on it would
		// allocate, and the diagnosis asks this on every analysis.
		if word != "" && strings.ContainsRune("0123456789+-", rune(word[0])) {
			if n, err := strconv.Atoi(word); err == nil && n >= 0 && n < len(names) {
				return names[n], nil
			}
		}
		if slices.Contains(names, word) {
			return word, nil
		}
		return "", fmt.Errorf("%s %q: not one of %s", option, v, strings.Join(names, ", "))
	}
	if numeric[option] {
		if booleans[option] {
			switch strings.ToLower(v) {
			case "yes", "true", "on":
				return "1", nil
			case "no", "false", "off":
				return "0", nil
			}
		}
		n, err := strconv.ParseUint(v, 10, 31)
		if err != nil {
			return "", fmt.Errorf("%s %q: not a number", option, v)
		}
		return strconv.FormatUint(n, 10), nil
	}
	switch option {
	case "arp_ip_target":
		var out []string
		for _, t := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == ';' }) {
			t = strings.TrimPrefix(t, "+") // sysfs's "+10.0.0.1" adds a target
			a, err := netip.ParseAddr(t)
			if err != nil || !a.Is4() {
				return "", fmt.Errorf("arp_ip_target %q: not an IPv4 address", t)
			}
			if !slices.Contains(out, a.String()) {
				out = append(out, a.String())
			}
		}
		return strings.Join(out, " "), nil
	case "primary":
		if strings.ContainsAny(v, " \t/") || len(v) > 15 {
			return "", fmt.Errorf("primary %q: not an interface name", v)
		}
		return v, nil
	case "ad_actor_system":
		mac := strings.ToLower(v)
		if len(mac) != 17 || strings.Count(mac, ":") != 5 {
			return "", fmt.Errorf("ad_actor_system %q: not a MAC address", v)
		}
		return mac, nil
	}
	return "", fmt.Errorf("unknown bonding option %q", option)
}

// Config is every bond the host's configuration defines, and what kept
// the readers from seeing all of it.
type Config struct {
	// Checked is false when the root has no etc/ at all (a support
	// bundle without it): nothing can be said about the configuration.
	Checked bool
	// Bonds by name, then by source in the order Read tries them.
	Bonds []Bond
	// Notes name files that exist but could not be read (NetworkManager
	// keyfiles are 0600): a bond they define is not seen.
	Notes []string
	// Warnings name lines the readers did not understand.
	Warnings []string
}

// Find returns the definitions of the bond called name, one per system.
func (c *Config) Find(name string) []*Bond {
	var out []*Bond
	for i := range c.Bonds {
		if c.Bonds[i].Name == name {
			out = append(out, &c.Bonds[i])
		}
	}
	return out
}

// Drift is one setting whose running value is not the configured one.
type Drift struct {
	Option   string `json:"option"`
	Intended string `json:"intended"`
	Running  string `json:"running"`
	File     string `json:"file"`
	Line     int    `json:"line"`
}
