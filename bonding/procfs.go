package bonding

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrNotBondingFile is returned (wrapped) by ParseProc when the data has
// neither a "Bonding Mode:" nor a "Slave Interface:" line, so it cannot be
// the status file of a bond (an empty read, a wrong path, another file).
var ErrNotBondingFile = errors.New("not a bonding status file")

// ParseProc parses the text of /proc/net/bonding/<name>.
//
// It returns the bond (Name is name) with every field the file gave set and
// every other field nil, and the lines it could not use: lines it does not
// know, lines whose value did not parse (that field stays nil) and lines the
// kernel prints but the model has no field for ("ARP Missed Max", "NS IPv6
// target/s"). Those lines are trimmed and never fatal, so a newer kernel's
// additions degrade to a warning instead of losing the whole bond.
//
// Layout differences between kernels are handled by keying on the text of
// each line rather than on its position: 3.x prints a slave's "Aggregator
// ID" before "Slave queue ID", readers without CAP_NET_ADMIN get no system,
// aggregator or "details" lines, and copies from documents mix tabs,
// spaces, CRLF and trailing blanks. Bond.LACP is set only when the file has
// the "802.3ad info" block or the mode is 802.3ad.
//
// The error wraps ErrNotBondingFile and is returned only when the data has
// neither a "Bonding Mode:" nor a "Slave Interface:" line.
func ParseProc(name string, data []byte) (Bond, []string, error) {
	b, notes, err := ParseProcReport(name, data)
	return b, notes.Unparsed, err
}

// ProcNotes are the lines of a /proc/net/bonding file that ParseProc could
// not use.
type ProcNotes struct {
	// Unparsed holds every such line, in file order.
	Unparsed []string
	// Garbled holds those of them whose key is known but whose value did
	// not parse: a damaged file, worth a warning. The other unparsed lines
	// are most likely a newer kernel's additions, worth nothing more.
	Garbled []string
}

// ParseProcReport is ParseProc telling garbled values apart from lines it
// does not know.
func ParseProcReport(name string, data []byte) (Bond, ProcNotes, error) {
	// A copy saved by a Windows editor may start with a byte order mark.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))

	var p procParser // on the stack: only the result is allocated
	p.init(name, data)
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		// A carriage return ends a line too: CRLF then leaves an empty
		// line, and a file with old Mac line ends still parses.
		for len(line) > 0 {
			part := line
			if i := bytes.IndexByte(line, '\r'); i >= 0 {
				part, line = line[:i], line[i+1:]
			} else {
				line = nil
			}
			// TrimSpace takes the kernel's tab before the aggregator
			// lines, the four spaces before the details lines and
			// whatever blanks a copy added.
			part = bytes.TrimSpace(part)
			if len(part) == 0 {
				continue
			}
			switch p.line(part) {
			case procOK:
			case procBad:
				p.notes.Garbled = append(p.notes.Garbled, string(part))
				p.notes.Unparsed = append(p.notes.Unparsed, p.notes.Garbled[len(p.notes.Garbled)-1])
			default:
				p.notes.Unparsed = append(p.notes.Unparsed, string(part))
			}
		}
	}
	if !p.isBonding {
		return Bond{Name: name}, ProcNotes{}, fmt.Errorf("/proc/net/bonding/%s: %w: no \"Bonding Mode:\" or \"Slave Interface:\" line (is it the file of a bond?)", name, ErrNotBondingFile)
	}
	if p.b.LACP == nil && p.b.Is8023AD() {
		p.b.LACP = &LACP{}
	}
	return p.b, p.notes, nil
}

// procResult says what became of one line.
type procResult uint8

const (
	procOK         procResult = iota // the line set its field
	procBad                          // a known key with a value that did not parse
	procUnknownKey                   // a key this section does not have
)

// procSection is the part of the file a line belongs to; it decides
// between keys that exist in several parts ("MII Status" of the bond or of
// a slave, "system priority" of the actor or of the partner).
type procSection uint8

const (
	procMaster  procSection = iota // before the first "Slave Interface"
	procSlave                      // a slave's own lines
	procActor                      // after "details actor lacp pdu:"
	procPartner                    // after "details partner lacp pdu:"
	procIgnore                     // a second file appended to ours
)

// procArena hands out pointers to values taken from chunks of one
// allocation, so the dozens of *int and *string fields of a bond cost a few
// allocations instead of one each. Each slot is used by one field only, so
// the pointers do not alias; a full chunk is replaced, not grown, so the
// pointers already handed out stay valid.
type procArena[T any] struct{ free []T }

func (a *procArena[T]) put(v T) *T {
	if len(a.free) == 0 {
		a.free = make([]T, 16)
	}
	p := &a.free[0]
	*p = v
	a.free = a.free[1:]
	return p
}

// procParser holds the state of one ParseProc call.
type procParser struct {
	b         Bond
	notes     ProcNotes
	sec       procSection
	cur       int  // index of the current slave in b.Slaves; -1 after a bad header
	lacpBlock bool // "802.3ad info" was seen
	isBonding bool // a "Bonding Mode" or "Slave Interface" line was seen
	sawHeader bool // the "Ethernet Channel Bonding Driver" line was seen

	ints     procArena[int]
	strs     procArena[string]
	states   procArena[PortState]
	actors   procArena[ActorPort]
	partners procArena[PartnerPort]

	// recent holds the strings made so far, so that a MAC address printed
	// once per slave (our system MAC, the partner's) is one allocation.
	recent  [8]string
	nrecent int
}

// init sizes the result for data.
func (p *procParser) init(name string, data []byte) {
	// Sizes from the grammar: the bond has at most 11 integer and 12 text
	// fields, a slave 14 and 7. Guessing high costs a little memory kept
	// with the result; guessing low costs one more chunk.
	n := bytes.Count(data, []byte("Slave Interface"))
	p.b = Bond{Name: name}
	p.cur = -1
	p.b.Slaves = make([]Slave, 0, n)
	p.ints.free = make([]int, 11+14*n)
	p.strs.free = make([]string, 12+7*n)
	if bytes.Contains(data, []byte("details ")) {
		p.states.free = make([]PortState, 2*n)
		p.actors.free = make([]ActorPort, n)
		p.partners.free = make([]PartnerPort, n)
	}
}

// line files one trimmed, non-empty line.
func (p *procParser) line(line []byte) procResult {
	key, val := procSplit(line)
	switch string(key) {
	case "Slave Interface":
		if p.sec == procIgnore {
			return procUnknownKey
		}
		p.isBonding = true
		return p.startSlave(val)
	case "Ethernet Channel Bonding Driver":
		if p.sawHeader || p.sec != procMaster {
			// A second header: two files were concatenated (cat
			// /proc/net/bonding/*). What follows is another bond.
			p.sec = procIgnore
			return procUnknownKey
		}
		p.sawHeader = true
	}
	switch p.sec {
	case procMaster:
		return p.master(key, val)
	case procActor:
		if r := p.detail(&p.b.Slaves[p.cur].Actor.Port, key, val); r != procUnknownKey {
			return r
		}
		return p.afterDetail(key, val)
	case procPartner:
		if r := p.detail(&p.b.Slaves[p.cur].Partner.Port, key, val); r != procUnknownKey {
			return r
		}
		return p.afterDetail(key, val)
	case procSlave:
		return p.slave(key, val)
	}
	return procUnknownKey
}

// afterDetail files a line of a details block that is not a details key.
// A slave key ends the block (a later kernel may print more slave lines
// after it); any other key is a new details line, kept aside without
// leaving the block, so that the details lines after it still count.
func (p *procParser) afterDetail(key, val []byte) procResult {
	sec := p.sec
	p.sec = procSlave
	r := p.slave(key, val)
	if r == procUnknownKey {
		p.sec = sec
	}
	return r
}

// procSplit cuts a line at the first colon followed by a blank or ending
// the line, so that colons inside values (MAC addresses) and inside keys
// ("NS IPv6 target/s (xx::xx form)") stay where they belong. A line without
// such a colon is all key ("802.3ad info").
func procSplit(line []byte) (key, val []byte) {
	off := 0
	for {
		i := bytes.IndexByte(line[off:], ':')
		if i < 0 {
			return line, nil
		}
		i += off
		if i+1 == len(line) {
			return bytes.TrimSpace(line[:i]), nil
		}
		if c := line[i+1]; c == ' ' || c == '\t' {
			return bytes.TrimSpace(line[:i]), bytes.TrimSpace(line[i+2:])
		}
		off = i + 1
	}
}

// master files a line of the bond's part of the file.
func (p *procParser) master(key, val []byte) procResult {
	b := &p.b
	switch string(key) {
	case "Ethernet Channel Bonding Driver":
		// "v6.8.0-142-generic", "v3.7.1 (April 27, 2011)".
		v, ok := bytes.CutPrefix(val, []byte("v"))
		if v = bytes.TrimSpace(v); !ok || len(v) == 0 {
			return procBad
		}
		b.DriverVersion = p.strs.put(p.str(v))
		return procOK
	case "Bonding Mode":
		p.isBonding = true
		return p.mode(val)
	case "Transmit Hash Policy":
		// "layer3+4 (1)": the name is what sysfs and netlink users know.
		name, num, ok := procCutParen(val)
		if !ok || len(name) == 0 || (num != nil && !procIsInt(num)) {
			return procBad
		}
		b.XmitHashPolicy = p.strs.put(p.str(name))
		return procOK
	case "Primary Slave":
		// "None", "eth0" or "eth0 (primary_reselect always)".
		if string(val) == "None" {
			return procOK
		}
		name, reselect, ok := procCutParen(val)
		if !ok || len(name) == 0 {
			return procBad
		}
		b.Primary = p.strs.put(p.str(name))
		if reselect != nil {
			word, found := bytes.CutPrefix(reselect, []byte("primary_reselect "))
			if word = bytes.TrimSpace(word); !found || len(word) == 0 {
				return procBad
			}
			b.PrimaryReselect = p.strs.put(p.str(word))
		}
		return procOK
	case "Currently Active Slave":
		if string(val) == "None" {
			return procOK
		}
		return p.setStr(&b.ActiveSlave, val)
	case "MII Status":
		return p.setStr(&b.MIIStatus, val)
	case "MII Polling Interval (ms)":
		return p.setInt(&b.MIIMonMs, val)
	case "Up Delay (ms)":
		return p.setInt(&b.UpDelayMs, val)
	case "Down Delay (ms)":
		return p.setInt(&b.DownDelayMs, val)
	case "Peer Notification Delay (ms)":
		return p.setInt(&b.PeerNotifyMs, val)
	case "ARP Polling Interval (ms)":
		return p.setInt(&b.ARPIntervalMs, val)
	case "ARP IP target/s (n.n.n.n form)":
		return p.arpTargets(val)
	case "802.3ad info":
		p.lacpBlock = true
		if b.LACP == nil {
			b.LACP = &LACP{}
		}
		return procOK
	}
	return p.lacp(key, val)
}

// mode parses MODENAME with its optional " (fail_over_mac X)" suffix.
func (p *procParser) mode(val []byte) procResult {
	res := procOK
	name := val
	if i := bytes.Index(val, []byte(" (fail_over_mac")); i >= 0 {
		name = val[:i]
		word, closed := bytes.CutSuffix(val[i+len(" (fail_over_mac"):], []byte(")"))
		word, spaced := bytes.CutPrefix(word, []byte(" "))
		if word = bytes.TrimSpace(word); closed && spaced && len(word) > 0 {
			p.b.FailOverMAC = p.strs.put(p.str(word))
		} else {
			res = procBad
		}
	}
	var mode string
	switch string(name) {
	case "load balancing (round-robin)":
		mode = ModeRoundRobin
	case "fault-tolerance (active-backup)":
		mode = ModeActiveBackup
	case "load balancing (xor)":
		mode = ModeXOR
	case "fault-tolerance (broadcast)":
		mode = ModeBroadcast
	case "IEEE 802.3ad Dynamic link aggregation":
		mode = Mode8023AD
	case "transmit load balancing":
		mode = ModeTLB
	case "adaptive load balancing":
		mode = ModeALB
	default:
		return procBad
	}
	p.b.Mode = p.strs.put(mode)
	return res
}

// arpTargets parses ", "-separated IPv4 addresses; the kernel prints the
// key with nothing after it when the list is empty. A list with one bad
// address is dropped whole: a partial list would look complete.
func (p *procParser) arpTargets(val []byte) procResult {
	n := 0
	if len(val) > 0 {
		n = bytes.Count(val, []byte(",")) + 1
	}
	targets := make([]string, 0, n)
	for rest := val; len(rest) > 0; {
		var t []byte
		t, rest, _ = bytes.Cut(rest, []byte(","))
		t = bytes.TrimSpace(t)
		if !procIsIPv4(t) {
			return procBad
		}
		targets = append(targets, p.str(t))
	}
	// Non-nil even when empty: ARP monitoring is on, with no target.
	p.b.ARPTargets = targets
	return procOK
}

// lacp files a line of the "802.3ad info" block.
func (p *procParser) lacp(key, val []byte) procResult {
	// The 802.3ad lines outside an 802.3ad bond would be a garbled file;
	// keeping LACP nil there is what the model promises.
	if !p.lacpBlock && !p.b.Is8023AD() {
		return procUnknownKey
	}
	if p.b.LACP == nil {
		p.b.LACP = &LACP{} // an 802.3ad bond has one anyway
	}
	l := p.b.LACP
	res := procUnknownKey
	switch string(key) {
	case "LACP active":
		switch string(val) {
		case "on":
			l.Active = new(true)
			res = procOK
		case "off":
			l.Active = new(false)
			res = procOK
		default:
			res = procBad
		}
	case "LACP rate":
		res = p.setStr(&l.Rate, val)
	case "Min links":
		res = p.setInt(&l.MinLinks, val)
	case "Aggregator selection policy (ad_select)":
		res = p.setStr(&l.ADSelect, val)
	case "System priority":
		res = p.setInt(&l.SystemPriority, val)
	case "System MAC address":
		res = p.setMAC(&l.SystemMAC, val)
	case "Active Aggregator Info":
		res = procOK
	case "Aggregator ID":
		if res = p.setInt(&l.AggregatorID, val); res == procOK {
			l.NoActiveAggregator = false
		}
	case "Number of ports":
		res = p.setInt(&l.NumPorts, val)
	case "Actor Key":
		res = p.setInt(&l.ActorKey, val)
	case "Partner Key":
		res = p.setInt(&l.PartnerKey, val)
	case "Partner Mac Address":
		res = p.setMAC(&l.PartnerMAC, val)
	default:
		// "bond bond0 has no active aggregator": the bond's name is in
		// the middle, and is not checked against ours (a replayed copy
		// may have been renamed).
		if val == nil && bytes.HasPrefix(key, []byte("bond ")) && bytes.HasSuffix(key, []byte(" has no active aggregator")) {
			l.NoActiveAggregator = true
			l.AggregatorID = nil
			res = procOK
		}
	}
	return res
}

// startSlave opens the block of the slave named val. A name seen before
// continues that slave: the kernel's seq_file can print a slave twice when
// the list changes between two read() calls, and one name must be one
// Slave for everything that looks slaves up by name.
func (p *procParser) startSlave(val []byte) procResult {
	p.sec = procSlave
	if len(val) == 0 {
		p.cur = -1 // its lines go to unknown rather than to the previous slave
		return procBad
	}
	for i := range p.b.Slaves {
		if p.b.Slaves[i].Name == string(val) {
			p.cur = i
			return procOK
		}
	}
	p.b.Slaves = append(p.b.Slaves, Slave{Name: p.str(val)})
	p.cur = len(p.b.Slaves) - 1
	return procOK
}

// slave files a line of a slave's block.
func (p *procParser) slave(key, val []byte) procResult {
	if p.cur < 0 {
		return procBad
	}
	s := &p.b.Slaves[p.cur]
	switch string(key) {
	case "MII Status":
		return p.setStr(&s.MIIStatus, val)
	case "Speed":
		// "1000 Mbps", or "Unknown" when the driver does not know.
		if bytes.EqualFold(val, []byte("unknown")) {
			return procOK
		}
		num, unit, _ := bytes.Cut(val, []byte(" "))
		if unit = bytes.TrimSpace(unit); len(unit) > 0 && string(unit) != "Mbps" {
			return procBad
		}
		return p.setInt(&s.SpeedMbps, num)
	case "Duplex":
		// The kernel prints "Unknown"; the grammar notes say "unknown".
		if bytes.EqualFold(val, []byte("unknown")) {
			return procOK
		}
		return p.setStr(&s.Duplex, val)
	case "Link Failure Count":
		return p.setInt(&s.LinkFailureCount, val)
	case "Permanent HW addr":
		if len(val) == 0 {
			return procOK // a device without an address (addr_len 0)
		}
		return p.setMAC(&s.PermHWAddr, val)
	case "Slave queue ID":
		return p.setInt(&s.QueueID, val)
	case "Aggregator ID":
		// "N/A": the port has no aggregator (yet).
		if string(val) == "N/A" {
			return procOK
		}
		return p.setInt(&s.AggregatorID, val)
	case "Actor Churn State":
		return p.setStr(&s.ActorChurnState, val)
	case "Partner Churn State":
		return p.setStr(&s.PartnerChurnState, val)
	case "Actor Churned Count":
		return p.setInt(&s.ActorChurnedCount, val)
	case "Partner Churned Count":
		return p.setInt(&s.PartnerChurnedCount, val)
	case "details actor lacp pdu":
		if s.Actor == nil {
			s.Actor = p.actors.put(ActorPort{})
		}
		p.sec = procActor
		return procOK
	case "details partner lacp pdu":
		if s.Partner == nil {
			s.Partner = p.partners.put(PartnerPort{})
		}
		p.sec = procPartner
		return procOK
	}
	return procUnknownKey
}

// detail files a line of a "details ... lacp pdu" block into port.
func (p *procParser) detail(port *Port, key, val []byte) procResult {
	switch string(key) {
	case "system priority":
		return p.setInt(&port.SystemPriority, val)
	case "system mac address":
		return p.setMAC(&port.SystemMAC, val)
	case "port key", "oper key":
		// The actor's key is "port key", the partner's "oper key"; the
		// model has one Key and names it per side in JSON.
		return p.setInt(&port.Key, val)
	case "port priority":
		return p.setInt(&port.PortPriority, val)
	case "port number":
		return p.setInt(&port.PortNumber, val)
	case "port state":
		n, ok := procAtoi(val)
		if !ok || n < 0 || n > 0xff {
			return procBad
		}
		port.PortState = p.states.put(PortState(n))
		return procOK
	}
	return procUnknownKey
}

// setInt sets *dst from a decimal value; a bad value leaves *dst alone.
func (p *procParser) setInt(dst **int, val []byte) procResult {
	n, ok := procAtoi(val)
	if !ok {
		return procBad
	}
	*dst = p.ints.put(n)
	return procOK
}

// setStr sets *dst to a non-empty value.
func (p *procParser) setStr(dst **string, val []byte) procResult {
	if len(val) == 0 {
		return procBad
	}
	*dst = p.strs.put(p.str(val))
	return procOK
}

// setMAC sets *dst to a hardware address: hex byte pairs joined by colons,
// 6 bytes for Ethernet, 20 for IPoIB.
func (p *procParser) setMAC(dst **string, val []byte) procResult {
	if !procIsMAC(val) {
		return procBad
	}
	*dst = p.strs.put(p.str(val))
	return procOK
}

// str returns val as a string, reusing a constant for the words the kernel
// prints and an earlier string for a repeated value, so that most fields
// need no allocation of their own.
func (p *procParser) str(val []byte) string {
	switch string(val) {
	case "up":
		return "up"
	case "down":
		return "down"
	case "going down":
		return "going down"
	case "going back":
		return "going back"
	case "full":
		return "full"
	case "half":
		return "half"
	case "none":
		return "none"
	case "monitoring":
		return "monitoring"
	case "churned":
		return "churned"
	case "unknown":
		return "unknown"
	case "slow":
		return "slow"
	case "fast":
		return "fast"
	case "stable":
		return "stable"
	case "bandwidth":
		return "bandwidth"
	case "count":
		return "count"
	case "active":
		return "active"
	case "follow":
		return "follow"
	case "always":
		return "always"
	case "better":
		return "better"
	case "failure":
		return "failure"
	case "layer2":
		return "layer2"
	case "layer3+4":
		return "layer3+4"
	case "layer2+3":
		return "layer2+3"
	case "encap2+3":
		return "encap2+3"
	case "encap3+4":
		return "encap3+4"
	case "vlan+srcmac":
		return "vlan+srcmac"
	case "00:00:00:00:00:00":
		return "00:00:00:00:00:00"
	}
	for _, s := range p.recent[:p.nrecent] {
		if s == string(val) {
			return s
		}
	}
	s := string(val)
	if p.nrecent < len(p.recent) {
		p.recent[p.nrecent] = s
		p.nrecent++
	}
	return s
}

// procCutParen splits "word (inner)" into word and inner. Without a
// parenthesis inner is nil; ok is false when one is opened and not closed
// at the end of the value.
func procCutParen(val []byte) (word, inner []byte, ok bool) {
	i := bytes.Index(val, []byte(" ("))
	if i < 0 {
		return val, nil, bytes.IndexByte(val, '(') < 0
	}
	inner, ok = bytes.CutSuffix(val[i+2:], []byte(")"))
	return bytes.TrimSpace(val[:i]), inner, ok
}

// procAtoi parses an optionally negative decimal int. It is strconv.Atoi
// without the string conversion and the error value, both of which would
// allocate on every line.
func procAtoi(b []byte) (int, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 18 { // 18 digits cannot overflow an int64
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// procIsInt reports whether b is a decimal int.
func procIsInt(b []byte) bool {
	_, ok := procAtoi(b)
	return ok
}

// procIsIPv4 reports whether b is a dotted-quad IPv4 address.
func procIsIPv4(b []byte) bool {
	for part := 0; part < 4; part++ {
		if part > 0 {
			if len(b) == 0 || b[0] != '.' {
				return false
			}
			b = b[1:]
		}
		n, digits := 0, 0
		for digits < len(b) && digits < 3 && b[digits] >= '0' && b[digits] <= '9' {
			n = n*10 + int(b[digits]-'0')
			digits++
		}
		if digits == 0 || n > 255 {
			return false
		}
		b = b[digits:]
	}
	return len(b) == 0
}

// procIsMAC reports whether b is hex byte pairs joined by colons.
func procIsMAC(b []byte) bool {
	if len(b) < 2 || (len(b)+1)%3 != 0 {
		return false
	}
	for i, c := range b {
		if i%3 == 2 {
			if c != ':' {
				return false
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
