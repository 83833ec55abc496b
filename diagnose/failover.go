package diagnose

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// failover: settings that look fine while every link is up and fail the
// day one dies. Each is judged only on values a source gave.
func (v *view) failover() []Finding {
	var out []Finding
	mode := v.mode()
	mii, miiOK := v.runningInt("miimon")
	arp, arpOK := v.runningInt("arp_interval")
	if miiOK && arpOK && mii == 0 && arp == 0 {
		out = append(out, Finding{ID: IDNoLinkMonitor, Severity: Warning, Slaves: []string{},
			Message: "no link monitor: miimon 0 and arp_interval 0",
			Detail:  "Without a monitor the bond never notices a dead link: it keeps sending on a slave whose cable is out, and an active-backup bond never fails over. Set miimon 100 (checks carrier every 100 ms), or the ARP monitor (arp_interval with arp_ip_target) where carrier can stay up while the path is dead (a media converter, a VM's virtual NIC)."})
	}
	if arpOK && arp > 0 {
		targets, _ := v.running("arp_ip_target")
		if strings.TrimSpace(targets) == "" {
			out = append(out, Finding{ID: IDARPNoTargets, Severity: Warning, Slaves: []string{},
				Message: fmt.Sprintf("ARP monitor on (arp_interval %d ms) with no arp_ip_target", arp),
				Detail:  "The ARP monitor judges a slave by the replies to ARP requests it sends to the targets; with none it has nothing to send, so no slave ever proves itself alive. Add one to sixteen targets that always answer (the default gateway, a second router): arp_ip_target +ADDRESS, or use miimon instead."})
		} else if mode == bonding.ModeActiveBackup {
			if val, ok := v.running("arp_validate"); ok && val == "none" {
				out = append(out, Finding{ID: IDARPValidateNone, Severity: Warning, Slaves: []string{},
					Message: fmt.Sprintf("ARP monitor (every %d ms) with arp_validate none", arp),
					Detail:  "Without validation a slave counts as up when any traffic arrives on it, so a backup slave on a dead path looks up on broadcasts from its own segment, and the bond may fail over onto it. Set arp_validate active (or all, or filter_active since 3.x kernels where other ARP traffic arrives): replies must then come from the targets."})
			}
		}
	}
	out = append(out, v.delayRounded()...)
	if mode == bonding.ModeActiveBackup || mode == bonding.ModeTLB || mode == bonding.ModeALB {
		prim, _ := v.running("primary")
		resel, reselOK := v.running("primary_reselect")
		up, upOK := v.runningInt("updelay")
		if prim != "" && reselOK && resel == "always" && upOK && up == 0 && miiOK && mii > 0 {
			out = append(out, Finding{ID: IDFailbackNoUpdelay, Severity: Warning, Slaves: []string{prim},
				Message: fmt.Sprintf("primary %s with primary_reselect always and updelay 0: failback the moment its link returns", prim),
				Detail:  "When the primary's link comes back the bond moves traffic onto it at once, while the switch port may still be blocking (spanning tree listening and learning take up to 30 s; a port-channel or a booting switch longer): traffic is lost a second time. Set updelay to the time the port needs to forward (a multiple of miimon, e.g. 30000), or primary_reselect better or failure so it stays on the backup."})
		}
	}
	if mode == bonding.ModeActiveBackup {
		if n, ok := v.runningInt("num_grat_arp"); ok && n == 0 {
			out = append(out, Finding{ID: IDNoGratARP, Severity: Warning, Slaves: []string{},
				Message: "active-backup with num_grat_arp 0: no gratuitous ARP after a failover",
				Detail:  "After a failover the switch still sends the bond's traffic to the old port until the host happens to send from the new one; inbound traffic is lost meanwhile (seconds to the switch's MAC ageing, 300 s). Set num_grat_arp (and num_unsol_na, the same setting) to 1 or more: the bond then announces itself from the new active slave."})
		}
		if f, ok := v.failOverMACNeeded(); ok {
			out = append(out, f)
		}
	}
	if f, ok := v.sharedFate(); ok {
		out = append(out, f)
	}
	if v.now.Is8023AD() {
		if rate, ok := v.running("lacp_rate"); ok && rate == "slow" {
			out = append(out, Finding{ID: IDLACPRateSlow, Severity: Info, Slaves: []string{},
				Message: "lacp_rate slow: a dead partner is noticed after 90 s",
				Detail:  "With the slow rate the partner sends an LACPDU every 30 s and a port drops out of the aggregate after three are missed. A link whose carrier stays up while the partner is gone (a switch that hangs, a fault behind a media converter) keeps its share of the traffic for 90 s. Set lacp_rate fast (every second, 3 s timeout) on the bond, and lacp rate fast on the switch's ports."})
		}
	}
	out = append(out, v.identityChanges()...)
	return out
}

// delayRounded: configured delays the kernel rounds down to a multiple of
// miimon.
func (v *view) delayRounded() []Finding {
	defs, _ := v.intended()
	if len(defs) == 0 {
		return nil
	}
	def := defs[0]
	var parts []string
	sev := Info
	mii, _ := v.runningInt("miimon")
	if mii == 0 {
		mii, _ = strconv.Atoi(def.Options["miimon"])
	}
	for _, opt := range delayOptions {
		r, ok := v.rounded(def, opt)
		if !ok {
			continue
		}
		if r == 0 {
			sev = Warning
		}
		parts = append(parts, fmt.Sprintf("%s %s ms runs as %d ms (%s)", opt, def.Options[opt], r, def.OptionAt[opt]))
	}
	if len(parts) == 0 {
		return nil
	}
	return []Finding{{ID: IDDelayRounded, Severity: sev, Slaves: []string{},
		Message: fmt.Sprintf("delays not a multiple of miimon %d: %s", mii, strings.Join(parts, ", ")),
		Detail:  "The kernel counts updelay, downdelay and peer_notif_delay in miimon ticks and rounds a configured value down (below one tick: to 0, no delay at all). Write a multiple of miimon in the file, so what runs is what was meant."}}
}

// failOverMACNeeded: active-backup over SR-IOV virtual functions with
// fail_over_mac none. The bond gives every slave its MAC, and a VF's MAC
// is set by its PF (the hypervisor): the change is refused or the VF's
// anti-spoofing drops the frames after a failover.
func (v *view) failOverMACNeeded() (Finding, bool) {
	rc := v.runningConfig()
	if rc == nil {
		return Finding{}, false
	}
	if fom, ok := v.running("fail_over_mac"); !ok || fom != "none" {
		return Finding{}, false
	}
	vfs := map[string]bool{}
	for name, d := range rc.Devices {
		if d.PhysFn != "" && slaveOf(v.now, name) != nil {
			vfs[name] = true
		}
	}
	if len(vfs) == 0 {
		return Finding{}, false
	}
	names := v.slaveOrder(vfs)
	return Finding{ID: IDFailOverMACNeeded, Severity: Warning, Slaves: names,
		Message: "active-backup over SR-IOV VFs (" + strings.Join(names, ", ") + ") with fail_over_mac none",
		Detail:  "With fail_over_mac none the bond puts one MAC on every slave. A virtual function's MAC belongs to its physical function (the hypervisor or the PF's driver sets it, with spoof checking on): the VF refuses the bond's MAC or drops what it sends after a failover. Set fail_over_mac active (the bond takes the active slave's MAC and announces it), or let the PF allow the MAC change (ip link set PF vf N trust on, spoofchk off)."}, true
}

// sharedFate: slaves on the same physical adapter (functions of one card,
// or VFs of one PF): one card failure takes them all.
func (v *view) sharedFate() (Finding, bool) {
	rc := v.runningConfig()
	if rc == nil || len(v.now.Slaves) < 2 {
		return Finding{}, false
	}
	byAdapter := map[string][]string{}
	for i := range v.now.Slaves {
		n := v.now.Slaves[i].Name
		if a := rc.Devices[n].Adapter(); a != "" {
			byAdapter[a] = append(byAdapter[a], n)
		}
	}
	var groups []string
	involved := map[string]bool{}
	adapters := make([]string, 0, len(byAdapter))
	for a := range byAdapter {
		adapters = append(adapters, a)
	}
	sort.Strings(adapters)
	all := false
	for _, a := range adapters {
		names := byAdapter[a]
		if len(names) < 2 {
			continue
		}
		if len(names) == len(v.now.Slaves) {
			all = true
		}
		groups = append(groups, strings.Join(names, ", ")+" on PCI "+a)
		for _, n := range names {
			involved[n] = true
		}
	}
	if len(groups) == 0 {
		return Finding{}, false
	}
	msg := "slaves share an adapter: " + strings.Join(groups, "; ")
	if all {
		msg = "not redundant: every slave is on one adapter (" + strings.Join(groups, "; ") + ")"
	}
	return Finding{ID: IDSharedFate, Severity: Warning, Slaves: v.slaveOrder(involved),
		Message: msg,
		Detail:  "Ports of one card (functions of one PCI device) or virtual functions of one physical function fail together: a card, its firmware or its driver going down takes all of them, and the bond with them. Put the slaves on different adapters (and, for the switch side, on different switches of a stack or MLAG pair)."}, true
}

// identityChanges: the bond's MAC or its LACP system MAC changed during
// the run (events kept since).
func (v *view) identityChanges() []Finding {
	var out []Finding
	for _, e := range v.changes {
		switch e.Kind {
		case model.EventBondMAC:
			out = append(out, Finding{ID: IDBondMACChanged, Severity: Warning, Slaves: []string{},
				Message: fmt.Sprintf("the bond's MAC changed at %s: %s -> %s", e.Time.Format("15:04:05"), e.Old, e.New),
				Detail:  "A running bond's MAC changes when something re-creates or re-derives it (a network manager restart taking the MAC of another first slave, a script): neighbours keep the old MAC in their ARP caches until a gratuitous ARP reaches them, and in 802.3ad the LACP system MAC changes with it. Pin the MAC in the configuration (netplan macaddress, NetworkManager cloned-mac-address, networkd MACAddress=, ifcfg MACADDR=, ifupdown hwaddress)."})
		case model.EventLACPSystem:
			out = append(out, Finding{ID: IDLACPSystemChanged, Severity: Warning, Slaves: []string{},
				Message: fmt.Sprintf("the LACP system MAC changed at %s: %s -> %s", e.Time.Format("15:04:05"), e.Old, e.New),
				Detail:  "The switch identifies the bond by its LACP system MAC: a new one is a new partner, so every port leaves the port-channel and renegotiates (traffic stops for seconds, some switches err-disable the ports). It follows the bond's MAC unless ad_actor_system is set: pin the bond's MAC in the configuration, or set ad_actor_system."})
		}
	}
	return out
}
