package diagnose

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/intent"
	"github.com/bondtop/bondtop/model"
)

// kernelDefaults are the values a bond made from nothing but its file's
// options has (bond_options.c), for the options an admin would call
// drifted when they differ. miimon is mode-dependent (see intendedValue).
var kernelDefaults = map[string]string{
	"mode": "balance-rr", "xmit_hash_policy": "layer2", "lacp_rate": "slow",
	"updelay": "0", "downdelay": "0", "fail_over_mac": "none",
	"primary_reselect": "always", "ad_select": "stable", "min_links": "0",
	"num_grat_arp": "1", "arp_interval": "0", "arp_validate": "none",
	"all_slaves_active": "0", "arp_ip_target": "", "primary": "",
}

// delayOptions are counted by the kernel in miimon ticks: a value that is
// not a multiple of miimon is rounded down.
var delayOptions = []string{"updelay", "downdelay", "peer_notif_delay"}

// intended returns the configuration's definitions of the bond (the first
// is compared; more than one is a conflict) and whether configuration
// could be read at all.
func (v *view) intended() ([]*intent.Bond, bool) {
	if v.config == nil || !v.config.Intent.Checked {
		return nil, false
	}
	return v.config.Intent.Find(v.now.Name), true
}

// runningOptions are the bond's sysfs options, nil when not read.
func (v *view) runningOptions() map[string]string {
	if v.config == nil || v.config.Running[v.now.Name] == nil {
		return nil
	}
	return v.config.Running[v.now.Name].Options
}

// running gives an option's running value in the kernel's words: from
// the bond model where it has the option (read every tick), else from
// sysfs (read with the configuration, every few seconds).
func (v *view) running(opt string) (string, bool) {
	if val, ok := v.modelValue(opt); ok {
		return val, true
	}
	opts := v.runningOptions()
	if raw, ok := opts[opt]; ok {
		if c, err := intent.Canonical(opt, raw); err == nil {
			return c, true
		}
	}
	if raw, ok := opts["num_unsol_na"]; ok && opt == "num_grat_arp" {
		c, err := intent.Canonical(opt, raw)
		return c, err == nil
	}
	if v.now.MIIMonMs != nil && v.now.ARPIntervalMs == nil {
		// procfs prints the ARP lines only when the ARP monitor is on:
		// its MII lines without them mean arp_interval 0, no targets.
		switch opt {
		case "arp_interval":
			return "0", true
		case "arp_ip_target":
			return "", true
		}
	}
	return "", false
}

// modelValue is an option as the bond model (netlink, procfs) has it.
func (v *view) modelValue(opt string) (string, bool) {
	b := v.now
	word := func(p *string) (string, bool) {
		if p == nil {
			return "", false
		}
		c, err := intent.Canonical(opt, *p)
		return c, err == nil
	}
	if p, ok := v.modelInt(opt); ok {
		if p == nil {
			return "", false
		}
		return strconv.Itoa(*p), true
	}
	switch opt {
	case "mode":
		return word(b.Mode)
	case "xmit_hash_policy":
		return word(b.XmitHashPolicy)
	case "arp_ip_target":
		if b.ARPIntervalMs == nil {
			return "", false
		}
		return strings.Join(b.ARPTargets, " "), true
	case "primary":
		return word(b.Primary)
	case "primary_reselect":
		return word(b.PrimaryReselect)
	case "fail_over_mac":
		return word(b.FailOverMAC)
	}
	if l := b.LACP; l != nil {
		switch opt {
		case "lacp_rate":
			return word(l.Rate)
		case "ad_select":
			return word(l.ADSelect)
		case "lacp_active":
			if l.Active == nil {
				return "", false
			}
			return map[bool]string{true: "on", false: "off"}[*l.Active], true
		}
	}
	return "", false
}

// modelInt is a numeric option's field in the bond model; has says
// whether the model has the option at all (the field is nil when unknown).
func (v *view) modelInt(opt string) (field *int, has bool) {
	b := v.now
	switch opt {
	case "miimon":
		return b.MIIMonMs, true
	case "updelay":
		return b.UpDelayMs, true
	case "downdelay":
		return b.DownDelayMs, true
	case "peer_notif_delay":
		return b.PeerNotifyMs, true
	case "arp_interval":
		return b.ARPIntervalMs, true
	case "tlb_dynamic_lb":
		return b.TLBDynamicLB, true
	}
	if l := b.LACP; l != nil {
		switch opt {
		case "min_links":
			return l.MinLinks, true
		case "ad_actor_sys_prio":
			return l.SystemPriority, true
		}
	}
	return nil, false
}

// runningInt is running for a number; ok is false when unknown. The
// model's number is taken as it is (not through its text, which would
// allocate on every analysis).
func (v *view) runningInt(opt string) (int, bool) {
	if p, _ := v.modelInt(opt); p != nil {
		return *p, true
	}
	s, ok := v.running(opt)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// intendedValue is what def asks for: its own setting, else the kernel's
// default; ok is false for options whose default is not known.
func intendedValue(def *intent.Bond, opt string) (string, bool) {
	if v, ok := def.Options[opt]; ok {
		return v, true
	}
	if opt == "miimon" {
		// The kernel turns miimon on (100 ms) when a mode that cannot use
		// the ARP monitor is set; NetworkManager does when neither
		// monitor is configured.
		_, arp := def.Options["arp_interval"]
		switch {
		case arp:
			return "", false
		case def.Source == intent.SourceNetworkManager:
			return "100", true
		}
		switch def.Options["mode"] {
		case bonding.Mode8023AD, bonding.ModeTLB, bonding.ModeALB:
			return "100", true
		}
		return "", false
	}
	v, ok := kernelDefaults[opt]
	return v, ok
}

// drift compares the bond with its first definition.
func (v *view) drift() (*intent.Bond, []intent.Drift) {
	defs, checked := v.intended()
	if !checked || len(defs) == 0 {
		if checked {
			return nil, []intent.Drift{}
		}
		return nil, nil
	}
	def := defs[0]
	out := []intent.Drift{}
	at := func(opt string) intent.Loc {
		if l, ok := def.OptionAt[opt]; ok {
			return l
		}
		return def.At
	}
	for _, opt := range intent.Options() {
		want, ok := intendedValue(def, opt)
		if !ok {
			continue
		}
		have, ok := v.running(opt)
		if !ok || sameValue(opt, want, have) {
			continue
		}
		if slices.Contains(delayOptions, opt) {
			if r, ok := v.rounded(def, opt); ok && strconv.Itoa(r) == have {
				continue // the kernel's rounding: delay-rounded says so
			}
		}
		l := at(opt)
		out = append(out, intent.Drift{Option: opt, Intended: want, Running: have, File: l.File, Line: l.Line})
	}
	if missing, extra := v.slaveDiff(def); len(missing)+len(extra) > 0 {
		l := def.SlavesAt
		if l.File == "" {
			l = def.At
		}
		var running []string
		for i := range v.now.Slaves {
			running = append(running, v.now.Slaves[i].Name)
		}
		out = append(out, intent.Drift{Option: "slaves", Intended: strings.Join(def.Slaves, " "), Running: strings.Join(running, " "), File: l.File, Line: l.Line})
	}
	if def.MTU != nil && v.now.MTU != nil && *def.MTU != *v.now.MTU {
		out = append(out, intent.Drift{Option: "mtu", Intended: strconv.Itoa(*def.MTU), Running: strconv.Itoa(*v.now.MTU), File: def.MTUAt.File, Line: def.MTUAt.Line})
	}
	return def, out
}

// sameValue compares two values in the kernel's words; ARP targets as
// sets.
func sameValue(opt, a, b string) bool {
	if opt == "arp_ip_target" {
		x, y := strings.Fields(a), strings.Fields(b)
		slices.Sort(x)
		slices.Sort(y)
		return slices.Equal(x, y)
	}
	return a == b
}

// slaveDiff lists the configured slaves that are not enslaved and the
// enslaved ones the configuration does not name (a configured name may be
// a pattern, networkd's "en*").
func (v *view) slaveDiff(def *intent.Bond) (missing, extra []string) {
	matched := map[string]bool{}
	for _, want := range def.Slaves {
		found := false
		for i := range v.now.Slaves {
			n := v.now.Slaves[i].Name
			if ok, _ := path.Match(want, n); ok || want == n {
				matched[n], found = true, true
			}
		}
		if !found && !strings.ContainsAny(want, "*?[") {
			missing = append(missing, want)
		}
	}
	for i := range v.now.Slaves {
		if !matched[v.now.Slaves[i].Name] {
			extra = append(extra, v.now.Slaves[i].Name)
		}
	}
	return missing, extra
}

// rounded is the kernel's value of a configured delay: rounded down to a
// multiple of miimon (running, else configured). ok is false when the
// delay or miimon is not known, miimon is off, or nothing is rounded.
func (v *view) rounded(def *intent.Bond, opt string) (int, bool) {
	s, ok := def.Options[opt]
	if !ok {
		return 0, false
	}
	d, _ := strconv.Atoi(s)
	mii, ok := v.runningInt("miimon")
	if !ok {
		m, err := strconv.Atoi(def.Options["miimon"])
		if err != nil {
			return 0, false
		}
		mii = m
	}
	if mii <= 0 || d%mii == 0 {
		return 0, false
	}
	return d / mii * mii, true
}

// applyHint says how each system applies its file to a running bond.
func applyHint(def *intent.Bond) string {
	switch def.Source {
	case intent.SourceNetplan:
		return "netplan apply (netplan try first, on a remote host)"
	case intent.SourceNetworkManager:
		return "nmcli connection up with the bond's profile (after nmcli connection reload if the file was edited)"
	case intent.SourceNetworkd:
		return "networkd never changes an existing bond: ip link delete " + def.Name + ", then networkctl reload (or reboot)"
	case intent.SourceIfcfg:
		return "ifdown " + def.Name + "; ifup " + def.Name + " (where NetworkManager reads ifcfg files: nmcli connection reload, then nmcli connection up " + def.Name + ")"
	case intent.SourceIfupdown:
		return "ifdown " + def.Name + " && ifup " + def.Name + " (ifupdown2: ifreload -a)"
	}
	return "re-apply the configuration"
}

// configFindings: drift from the configuration, no configuration, or two
// systems that configure the same bond.
func (v *view) configFindings() []Finding {
	defs, checked := v.intended()
	if !checked {
		return nil
	}
	name := v.now.Name
	if len(defs) == 0 {
		f := Finding{ID: IDConfigUnknown, Severity: Warning, Slaves: []string{},
			Message: name + " is in no configuration file (netplan, NetworkManager, networkd, ifcfg, ifupdown): it will not come back after a reboot",
			Detail:  "The bond was made by hand (ip link, sysfs, a script) or by a tool bondtop does not read. At the next reboot it is gone, and with it whatever runs over it. Write it into the host's configuration system with the options it runs with now; the drift check then guards it."}
		if n := len(v.config.Intent.Notes); n > 0 {
			f.Severity = Info
			f.Message = fmt.Sprintf("%s is in no configuration file bondtop could read (%d not readable: see notes)", name, n)
			f.Detail = "Some configuration files could not be read (NetworkManager keyfiles are readable by root only), so the bond may be defined there. Run bondtop as root to compare it with them. " + f.Detail
		}
		return []Finding{f}
	}
	var out []Finding
	if len(defs) > 1 {
		var where []string
		for _, d := range defs {
			where = append(where, d.Source+" ("+d.At.String()+")")
		}
		out = append(out, Finding{ID: IDConfigConflict, Severity: Warning, Slaves: []string{},
			Message: name + " is configured by " + strings.Join(where, " and "),
			Detail:  "Two systems that configure the same bond race at boot: whichever runs last wins, and each may undo the other's options or slaves when it re-applies (a NetworkManager restart, ifup). Keep the bond in one system and remove it from the other (bondtop compares the running bond with " + defs[0].Source + ")."})
	}
	def, drift := v.drift()
	if len(drift) == 0 {
		return out
	}
	var parts, places []string
	involved := map[string]bool{}
	for _, d := range drift {
		switch d.Option {
		case "slaves":
			missing, extra := v.slaveDiff(def)
			if len(missing) > 0 {
				parts = append(parts, strings.Join(missing, ", ")+" configured, not enslaved")
			}
			if len(extra) > 0 {
				parts = append(parts, strings.Join(extra, ", ")+" enslaved, not configured")
			}
			for _, n := range extra {
				involved[n] = true
			}
		default:
			parts = append(parts, fmt.Sprintf("%s %s, configured %s", d.Option, orNone(d.Running), orNone(d.Intended)))
		}
		places = append(places, fmt.Sprintf("%s at %s", d.Option, intent.Loc{File: d.File, Line: d.Line}))
	}
	out = append(out, Finding{ID: IDConfigDrift, Severity: Warning, Slaves: v.slaveOrder(involved),
		Message: fmt.Sprintf("%s differs from its %s configuration: %s", name, def.Source, strings.Join(parts, "; ")),
		Detail: "The running bond is not what the files say (" + strings.Join(places, ", ") + "; an option the file leaves out means the kernel's default). " +
			"It was changed by hand (sysfs, ip link) or the file was edited and never applied: at the next reboot or restart of the network the file's values come back, and what works now may stop. " +
			"Decide which is right: write the running value into the file, or apply the file: " + applyHint(def) + "."})
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// runningConfig returns the bond's sysfs reading, nil when not read.
func (v *view) runningConfig() *model.RunningConfig {
	if v.config == nil {
		return nil
	}
	return v.config.Running[v.now.Name]
}
