// Package ovs reads Open vSwitch bonds, read-only, the way ovs-vsctl and
// ovs-appctl see them, without running either: it speaks RFC 7047 JSON-RPC
// to ovsdb-server's unix socket (the Bridge, Port and Interface rows) and
// the same JSON-RPC to ovs-vswitchd's control socket (bond/show, lacp/show,
// lacp/show-stats, whose text replies it parses into structs).
//
// It owns the wire codec, the OVSDB row decoding, the text parsers and the
// merge of the three into Bond values. It imports no package of ours; the
// collector turns its Bonds into bonding.Bond values.
package ovs
