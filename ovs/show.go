package ovs

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// BondShow is one bond as `ovs-appctl bond/show` prints it.
type BondShow struct {
	Name                   string
	Mode                   string // bond_mode: active-backup, balance-slb, balance-tcp
	UpDelayMs, DownDelayMs int
	// NextRebalanceMs is nil when the bond does not rebalance
	// (active-backup, or bond-rebalance-interval=0).
	NextRebalanceMs *int
	// LACPStatus is negotiated, configured or off.
	LACPStatus   string
	FallbackAB   bool
	ActiveMember string // "" when there is none
	Members      []MemberShow
}

// MemberShow is one member of a bond/show block.
type MemberShow struct {
	Name      string
	Enabled   bool
	Active    bool
	MayEnable bool
	// Buckets are the hash buckets OVS assigned to this member with the
	// load each carried in the last rebalance interval (balance-slb and
	// balance-tcp only).
	Buckets []Bucket
}

// Bucket is one of a bond's 256 hash buckets.
type Bucket struct {
	Hash   int
	LoadKB int64
}

// bondMember accepts both spellings: OVS 2.16 renamed "slave" to "member".
func memberWord(s string) (rest string, ok bool) {
	for _, w := range []string{"member ", "slave "} {
		if strings.HasPrefix(s, w) {
			return s[len(w):], true
		}
	}
	return "", false
}

// ParseBondShow parses the reply of bond/show (with or without a port
// argument): one "---- NAME ----" block per bond.
func ParseBondShow(text string) ([]BondShow, error) {
	var bonds []BondShow
	var b *BondShow
	var m *MemberShow
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Text()
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		if name, ok := blockHeader(s); ok {
			bonds = append(bonds, BondShow{Name: name})
			b, m = &bonds[len(bonds)-1], nil
			continue
		}
		if b == nil {
			return nil, fmt.Errorf("bond/show line %d: %q before any \"---- bond ----\" header", line, s)
		}
		indented := raw != strings.TrimLeft(raw, " \t")
		if !indented {
			if rest, ok := memberWord(s); ok {
				name, state, found := strings.Cut(rest, ": ")
				if !found || name == "" {
					return nil, fmt.Errorf("bond/show line %d: member line %q has no state", line, s)
				}
				b.Members = append(b.Members, MemberShow{Name: name, Enabled: state == "enabled"})
				m = &b.Members[len(b.Members)-1]
				continue
			}
		}
		if m != nil && indented {
			if err := m.parseLine(s); err != nil {
				return nil, fmt.Errorf("bond/show line %d: %w", line, err)
			}
			continue
		}
		key, val, _ := strings.Cut(s, ": ")
		var err error
		switch key {
		case "bond_mode":
			b.Mode = val
		case "updelay":
			b.UpDelayMs, err = msValue(val)
		case "downdelay":
			b.DownDelayMs, err = msValue(val)
		case "next rebalance":
			var n int
			n, err = msValue(val)
			b.NextRebalanceMs = &n
		case "lacp_status":
			b.LACPStatus = val
		case "lacp_fallback_ab":
			b.FallbackAB = val == "true"
		case "active member mac", "active slave mac":
			// "b6:df:34:a8:a5:c0(a1)" or "00:00:00:00:00:00(none)"
			if i := strings.LastIndexByte(val, '('); i >= 0 && strings.HasSuffix(val, ")") {
				if name := val[i+1 : len(val)-1]; name != "none" {
					b.ActiveMember = name
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("bond/show line %d: %s: %w", line, key, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bond/show: %w", err)
	}
	for i := range bonds {
		for _, mm := range bonds[i].Members {
			if mm.Active && bonds[i].ActiveMember == "" {
				bonds[i].ActiveMember = mm.Name
			}
		}
	}
	return bonds, nil
}

// parseLine reads one indented line of a member: "active member",
// "may_enable: true", "hash 37: 12 kB load". Other lines (the MACs older
// releases listed under balance-slb buckets) are skipped.
func (m *MemberShow) parseLine(s string) error {
	switch {
	case s == "active member" || s == "active slave":
		m.Active = true
	case strings.HasPrefix(s, "may_enable: "):
		m.MayEnable = strings.TrimPrefix(s, "may_enable: ") == "true"
	case strings.HasPrefix(s, "hash "):
		h, load, ok := strings.Cut(strings.TrimPrefix(s, "hash "), ": ")
		if !ok {
			return fmt.Errorf("hash line %q has no load", s)
		}
		n, err := strconv.Atoi(h)
		if err != nil || n < 0 || n > 255 {
			return fmt.Errorf("hash line %q: bucket is not 0..255", s)
		}
		kb, ok := strings.CutSuffix(load, " kB load")
		if !ok {
			return fmt.Errorf("hash line %q: load is not \"N kB load\"", s)
		}
		v, err := strconv.ParseInt(kb, 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("hash line %q: load %q is not a count of kB", s, kb)
		}
		m.Buckets = append(m.Buckets, Bucket{Hash: n, LoadKB: v})
	}
	return nil
}

// blockHeader recognises "---- NAME ----" and "---- NAME statistics ----".
func blockHeader(s string) (string, bool) {
	if !strings.HasPrefix(s, "---- ") || !strings.HasSuffix(s, " ----") || len(s) < 11 {
		return "", false
	}
	name := strings.TrimSpace(s[5 : len(s)-5])
	return name, name != ""
}

// msValue reads "100 ms".
func msValue(s string) (int, error) {
	v, ok := strings.CutSuffix(s, " ms")
	if !ok {
		return 0, fmt.Errorf("%q is not \"N ms\"", s)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not \"N ms\"", s)
	}
	return n, nil
}

// LACPShow is one bond as `ovs-appctl lacp/show` prints it.
type LACPShow struct {
	Name string
	// Status is "active negotiated", "passive configured" and the like.
	Status         string
	SysID          string
	SysPriority    int
	AggregationKey int
	LACPTime       string // fast or slow
	Members        []LACPMemberShow
}

// Negotiated reports whether the status says "negotiated".
func (l *LACPShow) Negotiated() bool { return strings.Contains(l.Status, "negotiated") }

// LACPMemberShow is one member of a lacp/show block.
type LACPMemberShow struct {
	Name string
	// Status is "current attached", "expired attached", "defaulted
	// detached" and the like: the receive machine state, then whether the
	// member is attached to the aggregator.
	Status       string
	PortID       int
	PortPriority int
	MayEnable    bool
	Actor        LACPPort
	Partner      LACPPort
}

// Current reports a member whose partner's LACPDUs are current.
func (m *LACPMemberShow) Current() bool { return strings.HasPrefix(m.Status, "current") }

// Attached reports a member attached to the aggregator.
func (m *LACPMemberShow) Attached() bool { return strings.HasSuffix(m.Status, " attached") }

// LACPPort is one end of a member's LACP conversation.
type LACPPort struct {
	SysID        string
	SysPriority  int
	PortID       int
	PortPriority int
	Key          int
	// State is the port state byte in IEEE 802.1AX bit order, rebuilt
	// from OVS's words (activity timeout aggregation synchronized
	// collecting distributing defaulted expired).
	State uint8
}

// lacpStateWords are OVS's names of the port state bits, lowest bit first.
var lacpStateWords = [8]string{"activity", "timeout", "aggregation", "synchronized", "collecting", "distributing", "defaulted", "expired"}

func parseLACPState(s string) (uint8, error) {
	var st uint8
	for _, w := range strings.Fields(s) {
		found := false
		for i, name := range lacpStateWords {
			if w == name {
				st |= 1 << i
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown LACP state word %q", w)
		}
	}
	return st, nil
}

// ParseLACPShow parses the reply of lacp/show.
func ParseLACPShow(text string) ([]LACPShow, error) {
	var out []LACPShow
	var b *LACPShow
	var m *LACPMemberShow
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if name, ok := blockHeader(s); ok {
			out = append(out, LACPShow{Name: name})
			b, m = &out[len(out)-1], nil
			continue
		}
		if b == nil {
			return nil, fmt.Errorf("lacp/show line %d: %q before any \"---- bond ----\" header", line, s)
		}
		if rest, ok := strings.CutPrefix(s, "member: "); ok {
			m = b.addMember(rest)
			continue
		}
		if rest, ok := strings.CutPrefix(s, "slave: "); ok {
			m = b.addMember(rest)
			continue
		}
		key, val, _ := strings.Cut(s, ":")
		val = strings.TrimSpace(val)
		if err := b.set(m, key, val); err != nil {
			return nil, fmt.Errorf("lacp/show line %d: %s: %w", line, key, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lacp/show: %w", err)
	}
	return out, nil
}

func (b *LACPShow) addMember(rest string) *LACPMemberShow {
	name, status, _ := strings.Cut(rest, ": ")
	name = strings.TrimSuffix(name, ":")
	b.Members = append(b.Members, LACPMemberShow{Name: name, Status: status})
	return &b.Members[len(b.Members)-1]
}

// set stores one "key: value" line, of the bond when m is nil.
func (b *LACPShow) set(m *LACPMemberShow, key, val string) error {
	num := func(dst *int) error {
		if val == "" {
			return nil // a partner not heard from yet
		}
		n, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("%q is not a number", val)
		}
		*dst = n
		return nil
	}
	if m == nil {
		switch key {
		case "status":
			b.Status = val
		case "sys_id":
			b.SysID = val
		case "sys_priority":
			return num(&b.SysPriority)
		case "aggregation key":
			return num(&b.AggregationKey)
		case "lacp_time":
			b.LACPTime = val
		}
		return nil
	}
	var p *LACPPort
	switch {
	case strings.HasPrefix(key, "actor "):
		p, key = &m.Actor, strings.TrimPrefix(key, "actor ")
	case strings.HasPrefix(key, "partner "):
		p, key = &m.Partner, strings.TrimPrefix(key, "partner ")
	default:
		switch key {
		case "port_id":
			return num(&m.PortID)
		case "port_priority":
			return num(&m.PortPriority)
		case "may_enable":
			m.MayEnable = val == "true"
		}
		return nil
	}
	switch key {
	case "sys_id":
		p.SysID = val
	case "sys_priority":
		return num(&p.SysPriority)
	case "port_id":
		return num(&p.PortID)
	case "port_priority":
		return num(&p.PortPriority)
	case "key":
		return num(&p.Key)
	case "state":
		st, err := parseLACPState(val)
		p.State = st
		return err
	}
	return nil
}

// LACPStats are one member's counters from lacp/show-stats.
type LACPStats struct {
	TxPDUs, RxPDUs, RxBadPDUs, RxMarkerRequests int64
	LinkExpired, LinkDefaulted, CarrierChanged  int64
}

// ParseLACPStats parses the reply of lacp/show-stats: per bond, per
// member, its LACP counters.
func ParseLACPStats(text string) (map[string]map[string]LACPStats, error) {
	out := map[string]map[string]LACPStats{}
	var bond string
	var member string
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if name, ok := blockHeader(s); ok {
			bond, member = strings.TrimSuffix(name, " statistics"), ""
			out[bond] = map[string]LACPStats{}
			continue
		}
		if bond == "" {
			return nil, fmt.Errorf("lacp/show-stats line %d: %q before any header", line, s)
		}
		if rest, ok := strings.CutPrefix(s, "member: "); ok {
			member = strings.TrimSuffix(rest, ":")
			out[bond][member] = LACPStats{}
			continue
		}
		if rest, ok := strings.CutPrefix(s, "slave: "); ok {
			member = strings.TrimSuffix(rest, ":")
			out[bond][member] = LACPStats{}
			continue
		}
		if member == "" {
			continue
		}
		key, val, ok := strings.Cut(s, ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("lacp/show-stats line %d: %s: %q is not a count", line, key, val)
		}
		st := out[bond][member]
		switch key {
		case "TX PDUs":
			st.TxPDUs = n
		case "RX PDUs":
			st.RxPDUs = n
		case "RX Bad PDUs":
			st.RxBadPDUs = n
		case "RX Marker Request PDUs":
			st.RxMarkerRequests = n
		case "Link Expired":
			st.LinkExpired = n
		case "Link Defaulted":
			st.LinkDefaulted = n
		case "Carrier Status Changed":
			st.CarrierChanged = n
		}
		out[bond][member] = st
	}
	return out, sc.Err()
}
