package ovs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// The columns bondtop reads. Asking for named columns keeps the reply small
// and makes a schema without one of them fail loudly rather than silently.
var (
	bridgeColumns    = []string{"_uuid", "name", "ports", "datapath_type"}
	portColumns      = []string{"_uuid", "name", "interfaces", "bond_mode", "lacp", "bond_updelay", "bond_downdelay", "bond_active_slave", "other_config"}
	interfaceColumns = []string{"_uuid", "name", "link_state", "admin_state", "lacp_current", "statistics", "ofport", "ifindex", "link_speed", "mac_in_use", "type"}
)

// BridgeRow is the part of an OVSDB Bridge row bondtop reads.
type BridgeRow struct {
	UUID         string
	Name         string
	Ports        []string // Port row UUIDs
	DatapathType string   // "" (system) or "netdev"
}

// PortRow is the part of an OVSDB Port row bondtop reads. A port with two
// or more interfaces is a bond.
type PortRow struct {
	UUID       string
	Name       string
	Interfaces []string // Interface row UUIDs
	// BondMode is OVS's word (active-backup, balance-slb, balance-tcp);
	// empty when unset, which OVS runs as active-backup.
	BondMode string
	// LACP is "active", "passive", "off" or empty (off).
	LACP          string
	UpDelayMs     int
	DownDelayMs   int
	BondActiveMAC string // bond_active_slave: the active member's MAC
	OtherConfig   map[string]string
}

// InterfaceRow is the part of an OVSDB Interface row bondtop reads. Pointer
// fields are nil when the column is empty (ovs-vswitchd has not filled it).
type InterfaceRow struct {
	UUID        string
	Name        string
	Type        string
	LinkState   string // "up", "down" or empty
	AdminState  string
	LACPCurrent *bool
	OFPort      *int64
	IfIndex     *int64
	LinkSpeed   *int64 // bits per second
	MACInUse    string
	Statistics  map[string]int64
}

// DB is what one OVSDB read returned.
type DB struct {
	Bridges    []BridgeRow
	Ports      []PortRow
	Interfaces []InterfaceRow
}

// selectOp is one RFC 7047 "select" operation on every row of a table.
func selectOp(table string, columns []string) map[string]any {
	return map[string]any{"op": "select", "table": table, "where": []any{}, "columns": columns}
}

// maxPortInterfaces bounds the interfaces of one port and maxBondMembers
// those of every bond together, which readDB asks the Interface rows of
// one by one: Linux bonds and OVS bonds have a few members; a port
// naming a million interface UUIDs would cost gigabytes to ask about.
const (
	maxPortInterfaces = 1024
	maxBondMembers    = 4096
)

// readDB asks ovsdb-server for the Bridge and Port rows in one
// transaction, then for the Interface rows of the bonds' members only: on
// a hypervisor the Interface table holds a row with statistics for every
// VM's tap, which a bond reader has no use for.
func readDB(ctx context.Context, c *rpcConn) (*DB, error) {
	res, err := c.call(ctx, "transact", []any{"Open_vSwitch",
		selectOp("Bridge", bridgeColumns),
		selectOp("Port", portColumns)})
	if err != nil {
		return nil, err
	}
	tables, err := decodeOps(res, 2)
	if err != nil {
		return nil, err
	}
	db := &DB{}
	if err := db.addBridges(tables[0]); err != nil {
		return nil, err
	}
	if err := db.addPorts(tables[1]); err != nil {
		return nil, err
	}
	ops := []any{"Open_vSwitch"}
	for _, p := range db.Ports {
		if len(p.Interfaces) < 2 {
			continue
		}
		if len(ops)-1+len(p.Interfaces) > maxBondMembers {
			return nil, fmt.Errorf("ovsdb: the bonds have over %d members together; bondtop reads no more", maxBondMembers)
		}
		for _, u := range p.Interfaces {
			op := selectOp("Interface", interfaceColumns)
			op["where"] = []any{[]any{"_uuid", "==", []any{"uuid", u}}}
			ops = append(ops, op)
		}
	}
	if len(ops) == 1 {
		return db, nil // no bonds: nothing more to ask
	}
	res, err = c.call(ctx, "transact", ops)
	if err != nil {
		return nil, err
	}
	if tables, err = decodeOps(res, len(ops)-1); err != nil {
		return nil, err
	}
	for _, rows := range tables {
		if err := db.addInterfaces(rows); err != nil {
			return nil, err
		}
	}
	return db, nil
}

// decodeTransact decodes the result of one transaction that selects the
// Bridge, Port and Interface tables, in that order: the form the fixtures
// are captured in (captureFixtures), and what HostFromReplies reads.
func decodeTransact(res json.RawMessage) (*DB, error) {
	tables, err := decodeOps(res, 3)
	if err != nil {
		return nil, err
	}
	db := &DB{}
	if err := db.addBridges(tables[0]); err != nil {
		return nil, err
	}
	if err := db.addPorts(tables[1]); err != nil {
		return nil, err
	}
	if err := db.addInterfaces(tables[2]); err != nil {
		return nil, err
	}
	return db, nil
}

// decodeOps splits a transact result into the rows of its first n
// operations: an array of {"rows": [...]} objects, or an operation's
// {"error": ...}.
func decodeOps(res json.RawMessage, n int) ([][]map[string]json.RawMessage, error) {
	var ops []json.RawMessage
	if err := json.Unmarshal(res, &ops); err != nil {
		return nil, fmt.Errorf("ovsdb transact: result is not an array: %w", err)
	}
	if len(ops) < n {
		return nil, fmt.Errorf("ovsdb transact: %d results for %d operations", len(ops), n)
	}
	tables := make([][]map[string]json.RawMessage, n)
	for i := range tables {
		var r struct {
			Rows    []map[string]json.RawMessage `json:"rows"`
			Error   string                       `json:"error"`
			Details string                       `json:"details"`
		}
		if err := json.Unmarshal(ops[i], &r); err != nil {
			return nil, fmt.Errorf("ovsdb transact: operation %d: %w", i, err)
		}
		if r.Error != "" {
			return nil, fmt.Errorf("ovsdb: %s: %s", r.Error, r.Details)
		}
		tables[i] = r.Rows
	}
	return tables, nil
}

func (db *DB) addBridges(rows []map[string]json.RawMessage) error {
	for _, row := range rows {
		b := BridgeRow{}
		d := rowDecoder{row: row}
		b.UUID = d.uuid("_uuid")
		b.Name = d.str("name")
		b.Ports = d.uuids("ports")
		b.DatapathType = d.str("datapath_type")
		if d.err != nil {
			return fmt.Errorf("ovsdb Bridge row %q: %w", b.Name, d.err)
		}
		db.Bridges = append(db.Bridges, b)
	}
	sort.Slice(db.Bridges, func(i, j int) bool { return db.Bridges[i].Name < db.Bridges[j].Name })
	return nil
}

func (db *DB) addPorts(rows []map[string]json.RawMessage) error {
	for _, row := range rows {
		p := PortRow{}
		d := rowDecoder{row: row}
		p.UUID = d.uuid("_uuid")
		p.Name = d.str("name")
		p.Interfaces = d.uuids("interfaces")
		if len(p.Interfaces) > maxPortInterfaces {
			return fmt.Errorf("ovsdb Port row %q: %d interfaces, over the %d bondtop reads", p.Name, len(p.Interfaces), maxPortInterfaces)
		}
		p.BondMode = d.str("bond_mode")
		p.LACP = d.str("lacp")
		p.UpDelayMs = int(d.int("bond_updelay"))
		p.DownDelayMs = int(d.int("bond_downdelay"))
		p.BondActiveMAC = d.str("bond_active_slave")
		p.OtherConfig = d.strMap("other_config")
		if d.err != nil {
			return fmt.Errorf("ovsdb Port row %q: %w", p.Name, d.err)
		}
		db.Ports = append(db.Ports, p)
	}
	return nil
}

func (db *DB) addInterfaces(rows []map[string]json.RawMessage) error {
	for _, row := range rows {
		f := InterfaceRow{}
		d := rowDecoder{row: row}
		f.UUID = d.uuid("_uuid")
		f.Name = d.str("name")
		f.Type = d.str("type")
		f.LinkState = d.str("link_state")
		f.AdminState = d.str("admin_state")
		f.LACPCurrent = d.optBool("lacp_current")
		f.OFPort = d.optInt("ofport")
		f.IfIndex = d.optInt("ifindex")
		f.LinkSpeed = d.optInt("link_speed")
		f.MACInUse = d.str("mac_in_use")
		f.Statistics = d.intMap("statistics")
		if d.err != nil {
			return fmt.Errorf("ovsdb Interface row %q: %w", f.Name, d.err)
		}
		db.Interfaces = append(db.Interfaces, f)
	}
	return nil
}

// rowDecoder reads the columns of one row, keeping the first error. OVSDB
// writes a column of at most one value as that value or as the empty set
// ["set", []], sets as ["set", [...]] (or a lone atom), maps as
// ["map", [[k, v], ...]] and UUIDs as ["uuid", "..."] (RFC 7047 5.1).
type rowDecoder struct {
	row map[string]json.RawMessage
	err error
}

func (d *rowDecoder) fail(col string, err error) {
	if d.err == nil {
		d.err = fmt.Errorf("column %s: %w", col, err)
	}
}

// atoms returns a column's values: one for a scalar, any number for a set.
func (d *rowDecoder) atoms(col string) []json.RawMessage {
	raw, ok := d.row[col]
	if !ok || d.err != nil {
		return nil
	}
	var tagged []json.RawMessage
	if json.Unmarshal(raw, &tagged) != nil {
		return []json.RawMessage{raw} // a plain atom
	}
	if len(tagged) != 2 {
		d.fail(col, fmt.Errorf("want [tag, value], got %d elements", len(tagged)))
		return nil
	}
	var tag string
	if err := json.Unmarshal(tagged[0], &tag); err != nil {
		d.fail(col, errors.New("tag is not a string"))
		return nil
	}
	switch tag {
	case "set":
		var elems []json.RawMessage
		if err := json.Unmarshal(tagged[1], &elems); err != nil {
			d.fail(col, fmt.Errorf("set: %w", err))
			return nil
		}
		return elems
	case "uuid", "named-uuid":
		return []json.RawMessage{raw}
	default:
		d.fail(col, fmt.Errorf("unexpected %q where a set or atom belongs", tag))
		return nil
	}
}

// one returns the column's single value, or nil when it is empty.
func (d *rowDecoder) one(col string) json.RawMessage {
	a := d.atoms(col)
	switch len(a) {
	case 0:
		return nil
	case 1:
		return a[0]
	}
	d.fail(col, fmt.Errorf("%d values where at most one belongs", len(a)))
	return nil
}

func (d *rowDecoder) str(col string) string {
	v := d.one(col)
	if v == nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		d.fail(col, errors.New("not a string"))
	}
	return s
}

func (d *rowDecoder) optInt(col string) *int64 {
	v := d.one(col)
	if v == nil {
		return nil
	}
	var n int64
	if err := json.Unmarshal(v, &n); err != nil {
		d.fail(col, errors.New("not an integer"))
		return nil
	}
	return &n
}

func (d *rowDecoder) int(col string) int64 {
	if p := d.optInt(col); p != nil {
		return *p
	}
	return 0
}

func (d *rowDecoder) optBool(col string) *bool {
	v := d.one(col)
	if v == nil {
		return nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		d.fail(col, errors.New("not a boolean"))
		return nil
	}
	return &b
}

// uuidAtom decodes ["uuid", "..."].
func uuidAtom(raw json.RawMessage) (string, error) {
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 || pair[0] != "uuid" {
		return "", errors.New(`not a ["uuid", ...] atom`)
	}
	return pair[1], nil
}

func (d *rowDecoder) uuid(col string) string {
	v := d.one(col)
	if v == nil {
		return ""
	}
	u, err := uuidAtom(v)
	if err != nil {
		d.fail(col, err)
	}
	return u
}

func (d *rowDecoder) uuids(col string) []string {
	var out []string
	for _, a := range d.atoms(col) {
		u, err := uuidAtom(a)
		if err != nil {
			d.fail(col, err)
			return nil
		}
		out = append(out, u)
	}
	return out
}

// pairs decodes ["map", [[k, v], ...]].
func (d *rowDecoder) pairs(col string) [][2]json.RawMessage {
	raw, ok := d.row[col]
	if !ok || d.err != nil {
		return nil
	}
	var tagged []json.RawMessage
	if err := json.Unmarshal(raw, &tagged); err != nil || len(tagged) != 2 {
		d.fail(col, errors.New(`not a ["map", [...]] value`))
		return nil
	}
	var tag string
	if json.Unmarshal(tagged[0], &tag) != nil || tag != "map" {
		d.fail(col, errors.New(`not a ["map", [...]] value`))
		return nil
	}
	var kvs [][2]json.RawMessage
	if err := json.Unmarshal(tagged[1], &kvs); err != nil {
		d.fail(col, fmt.Errorf("map pairs: %w", err))
		return nil
	}
	return kvs
}

func (d *rowDecoder) strMap(col string) map[string]string {
	kvs := d.pairs(col)
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		var k, v string
		if json.Unmarshal(kv[0], &k) != nil || json.Unmarshal(kv[1], &v) != nil {
			d.fail(col, errors.New("map of strings holds a non-string"))
			return nil
		}
		out[k] = v
	}
	return out
}

func (d *rowDecoder) intMap(col string) map[string]int64 {
	kvs := d.pairs(col)
	out := make(map[string]int64, len(kvs))
	for _, kv := range kvs {
		var k string
		var v int64
		if json.Unmarshal(kv[0], &k) != nil || json.Unmarshal(kv[1], &v) != nil {
			d.fail(col, errors.New("map of integers holds something else"))
			return nil
		}
		out[k] = v
	}
	return out
}

// OtherConfigInt reads an integer other_config key of a port (such as
// bond-rebalance-interval); ok is false when it is unset or not a number.
func (p *PortRow) OtherConfigInt(key string) (int, bool) {
	s, ok := p.OtherConfig[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
