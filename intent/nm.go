package intent

import "fmt"

// nmConn is one NetworkManager connection profile as a keyfile holds it.
type nmConn struct {
	file                 string
	id, uuid, ifname     string
	typ, controller      string
	portType             string
	bond                 []iniEntry // the [bond] section
	mtu                  string
	at, mtuAt, controlAt int
}

// ParseNMKeyfiles reads NetworkManager keyfiles (*.nmconnection): bond
// profiles ([connection] type=bond, their [bond] options — NetworkManager
// spells them as the kernel does — and [ethernet] mtu) and the port
// profiles that name a bond as their controller (controller= or the
// older master=, by interface name, profile id or UUID).
func ParseNMKeyfiles(files []File) ([]Bond, []string) {
	var conns []nmConn
	var warnings []string
	for _, f := range files {
		entries, bad := parseINI(f.Data)
		for _, n := range bad {
			warnings = append(warnings, fmt.Sprintf("%s: not a keyfile line", Loc{f.Path, max(n, 0)}))
		}
		c := nmConn{file: f.Path}
		for _, e := range entries {
			switch e.section {
			case "connection":
				switch e.key {
				case "id":
					c.id = e.value
				case "uuid":
					c.uuid = e.value
				case "interface-name":
					c.ifname = e.value
				case "type":
					c.typ = e.value
					c.at = e.line
				case "controller", "master":
					c.controller, c.controlAt = e.value, e.line
				case "port-type", "slave-type":
					c.portType = e.value
				}
			case "bond":
				c.bond = append(c.bond, e)
			case "ethernet", "802-3-ethernet", "infiniband":
				if e.key == "mtu" {
					c.mtu, c.mtuAt = e.value, e.line
				}
			}
		}
		conns = append(conns, c)
	}
	var out []Bond
	for _, c := range conns {
		if c.typ != "bond" {
			continue
		}
		name := c.ifname
		if name == "" {
			warnings = append(warnings, fmt.Sprintf("%s: bond profile %q has no interface-name", c.file, c.id))
			continue
		}
		b := newBond(name, SourceNetworkManager, Loc{c.file, c.at})
		for _, e := range c.bond {
			if err := b.set(e.key, e.value, Loc{c.file, e.line}); err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: %v", Loc{c.file, e.line}, err))
			}
		}
		if c.mtu != "" && c.mtu != "0" && c.mtu != "auto" {
			if err := b.setMTU(c.mtu, Loc{c.file, c.mtuAt}); err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: %v", Loc{c.file, c.mtuAt}, err))
			}
		}
		for _, p := range conns {
			if p.controller == "" || (p.portType != "" && p.portType != "bond") {
				continue
			}
			if p.controller != name && p.controller != c.uuid && p.controller != c.id {
				continue
			}
			port := p.ifname
			if port == "" {
				// Matched by MAC address: the profile's name is all there is.
				port = p.id
			}
			b.addSlave(port, Loc{p.file, p.controlAt})
		}
		out = append(out, *b)
	}
	return out, warnings
}
