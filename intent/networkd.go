package intent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// networkdBond maps the [Bond] keys of a .netdev to the kernel's options.
var networkdBond = map[string]string{
	"Mode":                         "mode",
	"TransmitHashPolicy":           "xmit_hash_policy",
	"LACPTransmitRate":             "lacp_rate",
	"MIIMonitorSec":                "miimon",
	"UpDelaySec":                   "updelay",
	"DownDelaySec":                 "downdelay",
	"LearnPacketIntervalSec":       "lp_interval",
	"AdSelect":                     "ad_select",
	"AdActorSystemPriority":        "ad_actor_sys_prio",
	"AdUserPortKey":                "ad_user_port_key",
	"AdActorSystem":                "ad_actor_system",
	"FailOverMACPolicy":            "fail_over_mac",
	"ARPValidate":                  "arp_validate",
	"ARPIntervalSec":               "arp_interval",
	"ARPIPTargets":                 "arp_ip_target",
	"ARPAllTargets":                "arp_all_targets",
	"PrimaryReselectPolicy":        "primary_reselect",
	"ResendIGMP":                   "resend_igmp",
	"PacketsPerSlave":              "packets_per_slave",
	"GratuitousARP":                "num_grat_arp",
	"AllSlavesActive":              "all_slaves_active",
	"DynamicTransmitLoadBalancing": "tlb_dynamic_lb",
	"MinLinks":                     "min_links",
	"ARPMissedMax":                 "arp_missed_max",
	"PeerNotifyDelaySec":           "peer_notif_delay",
}

// ParseNetworkd reads systemd-networkd units: a .netdev with
// [NetDev] Kind=bond defines a bond (Name=, MTUBytes=, the [Bond] options
// with time spans in seconds unless suffixed), a .network whose [Network]
// has Bond=NAME enslaves the interfaces its [Match] Name= names (a glob
// stays a pattern: "en*"), PrimarySlave=yes makes one the primary, and
// the bond's own .network may set [Link] MTUBytes=. Files are taken in
// the order given (networkd sorts by file name; the first .network that
// matches an interface applies).
func ParseNetworkd(files []File) ([]Bond, []string) {
	var warnings []string
	warnAt := func(at Loc, format string, args ...any) {
		warnings = append(warnings, fmt.Sprintf("%s: %s", at, fmt.Sprintf(format, args...)))
	}
	var bonds []*Bond
	find := func(name string) *Bond {
		for _, b := range bonds {
			if b.Name == name {
				return b
			}
		}
		return nil
	}
	parsed := make([][]iniEntry, len(files))
	for i, f := range files {
		entries, bad := parseINI(f.Data)
		for _, n := range bad {
			warnAt(Loc{f.Path, max(n, 0)}, "not a unit file line")
		}
		parsed[i] = entries
	}
	for i, f := range files {
		if !strings.HasSuffix(f.Path, ".netdev") {
			continue
		}
		var name, kind, mtu string
		var at, mtuAt Loc
		for _, e := range parsed[i] {
			if e.section == "NetDev" {
				switch e.key {
				case "Name":
					name, at = e.value, Loc{f.Path, e.line}
				case "Kind":
					kind = e.value
				case "MTUBytes":
					mtu, mtuAt = e.value, Loc{f.Path, e.line}
				}
			}
		}
		if kind != "bond" || name == "" || find(name) != nil {
			continue // not a bond, or one an earlier file defined
		}
		b := newBond(name, SourceNetworkd, at)
		for _, e := range parsed[i] {
			if e.section != "Bond" {
				continue
			}
			loc := Loc{f.Path, e.line}
			opt, ok := networkdBond[e.key]
			if !ok {
				warnAt(loc, "unknown [Bond] setting %s", e.key)
				continue
			}
			value := e.value
			if unit := netplanTimes[opt]; unit != "" || opt == "peer_notif_delay" {
				ms, err := timeMillis(value, "s")
				if err != nil {
					warnAt(loc, "%s: %v", e.key, err)
					continue
				}
				if opt == "lp_interval" {
					ms /= 1000
				}
				value = strconv.FormatInt(ms, 10)
			}
			if opt == "arp_ip_target" {
				if value == "" {
					delete(b.Options, opt) // an empty assignment resets the list
					continue
				}
				if old, ok := b.Options[opt]; ok {
					value = old + " " + value
				}
			}
			if err := b.set(opt, value, loc); err != nil {
				warnAt(loc, "%v", err)
			}
		}
		if mtu != "" {
			if err := b.setMTU(bytesValue(mtu), mtuAt); err != nil {
				warnAt(mtuAt, "%v", err)
			}
		}
		bonds = append(bonds, b)
	}
	claimed := map[string]bool{} // interfaces an earlier .network matched
	for i, f := range files {
		if !strings.HasSuffix(f.Path, ".network") {
			continue
		}
		var names []string
		var bond string
		var bondAt, mtuAt Loc
		var mtu string
		primary := false
		for _, e := range parsed[i] {
			switch {
			case e.section == "Match" && e.key == "Name":
				names = append(names, strings.Fields(e.value)...)
			case e.section == "Network" && e.key == "Bond":
				bond, bondAt = e.value, Loc{f.Path, e.line}
			case e.section == "Network" && e.key == "PrimarySlave":
				primary = isYes(e.value)
			case e.section == "Link" && e.key == "MTUBytes":
				mtu, mtuAt = e.value, Loc{f.Path, e.line}
			}
		}
		names = slices.DeleteFunc(names, func(n string) bool { return claimed[n] })
		for _, n := range names {
			claimed[n] = true
		}
		if b := find(bond); b != nil {
			for _, n := range names {
				b.addSlave(n, bondAt)
				if primary {
					b.Options["primary"] = n
					b.OptionAt["primary"] = bondAt
				}
			}
		}
		// The bond's own .network: its MTU applies after creation.
		for _, n := range names {
			if b := find(n); b != nil && mtu != "" {
				b.addFile(f.Path)
				if err := b.setMTU(bytesValue(mtu), mtuAt); err != nil {
					warnAt(mtuAt, "%v", err)
				}
			}
		}
	}
	out := make([]Bond, len(bonds))
	for i, b := range bonds {
		out[i] = *b
	}
	return out, warnings
}

// bytesValue turns systemd's byte sizes ("9000", "9K") into a number.
func bytesValue(v string) string {
	v = strings.TrimSpace(v)
	mult := 1
	switch {
	case strings.HasSuffix(v, "K"):
		mult, v = 1024, strings.TrimSuffix(v, "K")
	case strings.HasSuffix(v, "M"):
		mult, v = 1024*1024, strings.TrimSuffix(v, "M")
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return v
	}
	return strconv.Itoa(n * mult)
}

func isYes(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "yes", "true", "on", "1":
		return true
	}
	return false
}

// networkdOrder sorts units as networkd does: by file name across
// /usr/lib, /run and /etc, /etc hiding a file of the same name elsewhere.
func networkdOrder(files []File) []File { return byFileName(files, "/etc/", "/run/") }
