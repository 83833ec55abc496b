package bonding

import (
	"encoding/binary"
	"encoding/json"
	"github.com/bondtop/bondtop/internal/nltest"
	"net"
	"strconv"
	"testing"

	"github.com/mdlayher/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

func mac(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

// bondInfo6x is IFLA_LINKINFO of an 802.3ad bond as bond_fill_info of a
// 6.x kernel sends it to CAP_NET_ADMIN, attribute by attribute.
func bondInfo6x() *nl.RtAttr {
	li := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	li.AddRtAttr(unix.IFLA_INFO_KIND, nl.ZeroTerminated("bond"))
	d := li.AddRtAttr(unix.IFLA_INFO_DATA, nil)
	d.AddRtAttr(unix.IFLA_BOND_MODE, nl.Uint8Attr(4))
	d.AddRtAttr(unix.IFLA_BOND_MIIMON, nl.Uint32Attr(100))
	d.AddRtAttr(unix.IFLA_BOND_UPDELAY, nl.Uint32Attr(200))
	d.AddRtAttr(unix.IFLA_BOND_DOWNDELAY, nl.Uint32Attr(300))
	d.AddRtAttr(unix.IFLA_BOND_PEER_NOTIF_DELAY, nl.Uint32Attr(400))
	d.AddRtAttr(unix.IFLA_BOND_USE_CARRIER, nl.Uint8Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_ARP_INTERVAL, nl.Uint32Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_ARP_VALIDATE, nl.Uint32Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_ARP_ALL_TARGETS, nl.Uint32Attr(0))
	// nla_nest_start (not _noflag): NLA_F_NESTED set on the type.
	ns := nl.NewRtAttr(unix.IFLA_BOND_NS_IP6_TARGET|unix.NLA_F_NESTED, nil)
	ns.AddRtAttr(0, net.ParseIP("fe80::1").To16())
	d.AddChild(ns)
	d.AddRtAttr(unix.IFLA_BOND_PRIMARY_RESELECT, nl.Uint8Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_FAIL_OVER_MAC, nl.Uint8Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_XMIT_HASH_POLICY, nl.Uint8Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_RESEND_IGMP, nl.Uint32Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_NUM_PEER_NOTIF, nl.Uint8Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_ALL_SLAVES_ACTIVE, nl.Uint8Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_MIN_LINKS, nl.Uint32Attr(2))
	d.AddRtAttr(unix.IFLA_BOND_LP_INTERVAL, nl.Uint32Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_PACKETS_PER_SLAVE, nl.Uint32Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_AD_LACP_ACTIVE, nl.Uint8Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_AD_LACP_RATE, nl.Uint8Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_AD_SELECT, nl.Uint8Attr(2))
	d.AddRtAttr(unix.IFLA_BOND_TLB_DYNAMIC_LB, nl.Uint8Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_MISSED_MAX, nl.Uint8Attr(2))
	d.AddRtAttr(unix.IFLA_BOND_AD_ACTOR_SYS_PRIO, nl.Uint16Attr(65535))
	d.AddRtAttr(unix.IFLA_BOND_AD_USER_PORT_KEY, nl.Uint16Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_AD_ACTOR_SYSTEM, make([]byte, 6))
	ad := d.AddRtAttr(unix.IFLA_BOND_AD_INFO, nil)
	ad.AddRtAttr(unix.IFLA_BOND_AD_INFO_AGGREGATOR, nl.Uint16Attr(1))
	ad.AddRtAttr(unix.IFLA_BOND_AD_INFO_NUM_PORTS, nl.Uint16Attr(2))
	ad.AddRtAttr(unix.IFLA_BOND_AD_INFO_ACTOR_KEY, nl.Uint16Attr(15))
	ad.AddRtAttr(unix.IFLA_BOND_AD_INFO_PARTNER_KEY, nl.Uint16Attr(15))
	ad.AddRtAttr(unix.IFLA_BOND_AD_INFO_PARTNER_MAC, mac("02:fc:ce:91:32:14"))
	return li
}

// slaveInfo is IFLA_LINKINFO of a veth enslaved to an 802.3ad bond.
func slaveInfo(state, mii uint8, agg uint16, actor uint8, partner uint16) *nl.RtAttr {
	li := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	li.AddRtAttr(unix.IFLA_INFO_KIND, nl.ZeroTerminated("veth"))
	li.AddRtAttr(unix.IFLA_INFO_SLAVE_KIND, nl.ZeroTerminated("bond"))
	d := li.AddRtAttr(unix.IFLA_INFO_SLAVE_DATA, nil)
	d.AddRtAttr(unix.IFLA_BOND_SLAVE_STATE, nl.Uint8Attr(state))
	d.AddRtAttr(unix.IFLA_BOND_SLAVE_MII_STATUS, nl.Uint8Attr(mii))
	d.AddRtAttr(unix.IFLA_BOND_SLAVE_LINK_FAILURE_COUNT, nl.Uint32Attr(3))
	d.AddRtAttr(unix.IFLA_BOND_SLAVE_PERM_HWADDR, mac("02:1d:22:fd:7e:72"))
	d.AddRtAttr(unix.IFLA_BOND_SLAVE_QUEUE_ID, nl.Uint16Attr(0))
	if agg != 0 {
		d.AddRtAttr(unix.IFLA_BOND_SLAVE_AD_AGGREGATOR_ID, nl.Uint16Attr(agg))
		d.AddRtAttr(unix.IFLA_BOND_SLAVE_AD_ACTOR_OPER_PORT_STATE, nl.Uint8Attr(actor))
		d.AddRtAttr(unix.IFLA_BOND_SLAVE_AD_PARTNER_OPER_PORT_STATE, nl.Uint16Attr(partner))
	}
	return li
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFromNetlinkBondKernelMessage(t *testing.T) {
	msg := nltest.Link{
		Index: 7, Name: "bond0", Flags: unix.IFF_UP | unix.IFF_LOWER_UP | unix.IFF_RUNNING,
		MTU: 9000, Oper: netlink.OperUp, HWAddr: mac("02:1d:22:fd:7e:72"),
		Stats:    &netlink.LinkStatistics64{RxBytes: 1 << 40, TxBytes: 2, RxPackets: 3, TxPackets: 4, RxOverErrors: 5, RxFifoErrors: 6},
		LinkInfo: bondInfo6x(),
	}.Bytes()

	scan, ok := ScanLink(msg)
	if !ok || scan != (LinkScan{Index: 7, Bond: true}) {
		t.Fatalf("ScanLink = %+v, %v", scan, ok)
	}
	link, err := netlink.LinkDeserialize(nil, msg)
	if err != nil {
		t.Fatal(err)
	}
	nb, isBond := link.(*netlink.Bond)
	if !isBond {
		t.Fatalf("LinkDeserialize gave %T", link)
	}
	if nb.AdInfo != nil {
		t.Log("vishvananda/netlink now decodes IFLA_BOND_AD_INFO itself")
	}
	attrs, ok := ParseBondAttrs(msg)
	if !ok {
		t.Fatal("ParseBondAttrs: not a bond")
	}
	if !attrs.Has(unix.IFLA_BOND_NS_IP6_TARGET) || !attrs.Has(unix.IFLA_BOND_MISSED_MAX) || attrs.Has(unix.IFLA_BOND_ACTIVE_SLAVE) {
		t.Errorf("presence mask %b", attrs.present)
	}
	b := FromNetlinkBond(nb, &attrs, nil)
	want := `{
  "name": "bond0",
  "mode": "802.3ad",
  "xmit_hash_policy": "layer3+4",
  "mii_status": "up",
  "miimon_ms": 100,
  "updelay_ms": 200,
  "downdelay_ms": 300,
  "peer_notif_delay_ms": 400,
  "arp_interval_ms": 0,
  "primary": null,
  "primary_reselect": "always",
  "active_slave": null,
  "fail_over_mac": "none",
  "tlb_dynamic_lb": 1,
  "mtu": 9000,
  "operstate": "up",
  "driver_version": null,
  "lacp": {
    "active": true,
    "rate": "fast",
    "min_links": 2,
    "ad_select": "count",
    "system_priority": 65535,
    "system_mac": "02:1d:22:fd:7e:72",
    "no_active_aggregator": false,
    "aggregator_id": 1,
    "num_ports": 2,
    "actor_key": 15,
    "partner_key": 15,
    "partner_mac": "02:fc:ce:91:32:14"
  },
  "slaves": null
}`
	if got := jsonOf(t, b); got != want {
		t.Errorf("bond:\n%s\nwant:\n%s", got, want)
	}
	for c, v := range map[Counter]uint64{RxBytes: 1 << 40, TxBytes: 2, RxPackets: 3, TxPackets: 4, RxErrors: 0, RxOverErrors: 5, RxFifoErrors: 6} {
		if got, ok := b.Counters.Get(c); !ok || got != v {
			t.Errorf("counter %v = %d, %v; want %d", c, got, ok, v)
		}
	}
}

func TestFromNetlinkSlaveKernelMessage(t *testing.T) {
	tests := []struct {
		name string
		info *nl.RtAttr
		want string
	}{
		{"active, in aggregator", slaveInfo(0, 0, 1, 63, 63),
			`{"name":"e1","mii_status":"up","state":"active","speed_mbps":null,"duplex":null,"mtu":1500,"operstate":"up","link_failure_count":3,"perm_hwaddr":"02:1d:22:fd:7e:72","queue_id":0,"aggregator_id":1,"actor_churn_state":null,"partner_churn_state":null,"actor_churned_count":null,"partner_churned_count":null,"actor":{"port_key":null,"port_number":null,"port_priority":null,"port_state":63,"port_state_flags":["activity","short_timeout","aggregation","synchronization","collecting","distributing"],"system_mac":null,"system_priority":null},"partner":{"oper_key":null,"port_number":null,"port_priority":null,"port_state":63,"port_state_flags":["activity","short_timeout","aggregation","synchronization","collecting","distributing"],"system_mac":null,"system_priority":null}}`},
		{"backup, going down, no aggregator", slaveInfo(1, 1, 0, 0, 0),
			`{"name":"e1","mii_status":"going down","state":"backup","speed_mbps":null,"duplex":null,"mtu":1500,"operstate":"up","link_failure_count":3,"perm_hwaddr":"02:1d:22:fd:7e:72","queue_id":0,"aggregator_id":null,"actor_churn_state":null,"partner_churn_state":null,"actor_churned_count":null,"partner_churned_count":null,"actor":null,"partner":null}`},
		{"state 0 is a valid port state", slaveInfo(0, 3, 2, 0, 71),
			`{"name":"e1","mii_status":"going back","state":"active","speed_mbps":null,"duplex":null,"mtu":1500,"operstate":"up","link_failure_count":3,"perm_hwaddr":"02:1d:22:fd:7e:72","queue_id":0,"aggregator_id":2,"actor_churn_state":null,"partner_churn_state":null,"actor_churned_count":null,"partner_churned_count":null,"actor":{"port_key":null,"port_number":null,"port_priority":null,"port_state":0,"port_state_flags":[],"system_mac":null,"system_priority":null},"partner":{"oper_key":null,"port_number":null,"port_priority":null,"port_state":71,"port_state_flags":["activity","short_timeout","aggregation","defaulted"],"system_mac":null,"system_priority":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := nltest.Link{Index: 3, Name: "e1", MTU: 1500, Oper: netlink.OperUp, Master: 7,
				Flags: unix.IFF_UP | unix.IFF_SLAVE, LinkInfo: tt.info}.Bytes()
			scan, ok := ScanLink(msg)
			if !ok || scan != (LinkScan{Index: 3, Master: 7, Slave: true}) {
				t.Fatalf("ScanLink = %+v, %v", scan, ok)
			}
			link, err := netlink.LinkDeserialize(nil, msg)
			if err != nil {
				t.Fatal(err)
			}
			attrs, ok := ParseSlaveAttrs(msg)
			if !ok {
				t.Fatal("ParseSlaveAttrs: not a bond slave")
			}
			s := FromNetlinkSlave(link, &attrs)
			got, _ := json.Marshal(s)
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			// Without the presence mask the same answer follows from
			// v1.3.1's zero aggregator id.
			if got2, _ := json.Marshal(FromNetlinkSlave(link, nil)); string(got2) != tt.want {
				t.Errorf("without attrs:\n%s", got2)
			}
		})
	}
}

// TestOldKernelBond: kernels before 3.14 send seven bond attributes. What
// they do not send must stay nil, not become the zero value (layer2, slow,
// stable...).
func TestOldKernelBond(t *testing.T) {
	li := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	li.AddRtAttr(unix.IFLA_INFO_KIND, nl.ZeroTerminated("bond"))
	d := li.AddRtAttr(unix.IFLA_INFO_DATA, nil)
	d.AddRtAttr(unix.IFLA_BOND_MODE, nl.Uint8Attr(4))
	d.AddRtAttr(unix.IFLA_BOND_MIIMON, nl.Uint32Attr(100))
	d.AddRtAttr(unix.IFLA_BOND_UPDELAY, nl.Uint32Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_DOWNDELAY, nl.Uint32Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_USE_CARRIER, nl.Uint8Attr(1))
	d.AddRtAttr(unix.IFLA_BOND_ARP_INTERVAL, nl.Uint32Attr(0))
	msg := nltest.Link{Index: 2, Name: "bond0", MTU: 1500, Oper: netlink.OperDown, LinkInfo: li}.Bytes()
	link, err := netlink.LinkDeserialize(nil, msg)
	if err != nil {
		t.Fatal(err)
	}
	attrs, ok := ParseBondAttrs(msg)
	if !ok {
		t.Fatal("not a bond")
	}
	b := FromNetlinkBond(link.(*netlink.Bond), &attrs, nil)
	if b.Mode == nil || *b.Mode != "802.3ad" || b.MIIMonMs == nil || *b.MIIMonMs != 100 {
		t.Errorf("mode %v miimon %v", b.Mode, b.MIIMonMs)
	}
	if b.XmitHashPolicy != nil || b.FailOverMAC != nil || b.TLBDynamicLB != nil || b.PrimaryReselect != nil || b.MIIStatus != nil {
		t.Errorf("unsent attributes filled: %s", jsonOf(t, b))
	}
	if b.LACP == nil || b.LACP.Rate != nil || b.LACP.ADSelect != nil || b.LACP.MinLinks != nil || b.LACP.NoActiveAggregator {
		t.Errorf("lacp: %s", jsonOf(t, b.LACP))
	}
}

func TestNoActiveAggregator(t *testing.T) {
	li := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	li.AddRtAttr(unix.IFLA_INFO_KIND, nl.ZeroTerminated("bond"))
	d := li.AddRtAttr(unix.IFLA_INFO_DATA, nil)
	d.AddRtAttr(unix.IFLA_BOND_MODE, nl.Uint8Attr(4))
	d.AddRtAttr(unix.IFLA_BOND_AD_LACP_RATE, nl.Uint8Attr(0))
	d.AddRtAttr(unix.IFLA_BOND_AD_SELECT, nl.Uint8Attr(0))
	msg := nltest.Link{Index: 2, Name: "bond0", MTU: 1500, LinkInfo: li}.Bytes()
	link, err := netlink.LinkDeserialize(nil, msg)
	if err != nil {
		t.Fatal(err)
	}
	attrs, _ := ParseBondAttrs(msg)
	b := FromNetlinkBond(link.(*netlink.Bond), &attrs, nil)
	if !b.LACP.NoActiveAggregator || b.LACP.AggregatorID != nil {
		t.Errorf("lacp: %s", jsonOf(t, b.LACP))
	}
	// Without CAP_NET_ADMIN the actor system is not sent.
	if b.LACP.SystemMAC != nil || b.LACP.SystemPriority != nil {
		t.Errorf("system: %s", jsonOf(t, b.LACP))
	}
	if *b.LACP.Rate != "slow" || *b.LACP.ADSelect != "stable" {
		t.Errorf("rate %s ad_select %s", *b.LACP.Rate, *b.LACP.ADSelect)
	}
}

// TestFromNetlinkBondValues converts constructed netlink.Bond values, as
// LinkList or a test would give them (no presence mask).
func TestFromNetlinkBondValues(t *testing.T) {
	names := map[int]string{4: "eth0", 5: "eth1"}
	slaveName := func(i int) string { return names[i] }
	bond := func(f func(b *netlink.Bond)) *netlink.Bond {
		b := netlink.NewLinkBond(netlink.LinkAttrs{Name: "bond0", MTU: 1500, HardwareAddr: mac("02:00:00:00:00:01")})
		f(b)
		return b
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	num := func(p *int) string {
		if p == nil {
			return "<nil>"
		}
		return strconv.Itoa(*p)
	}
	tests := []struct {
		name  string
		link  *netlink.Bond
		check func(b Bond) string // "" when right
	}{
		{"all unset", bond(func(*netlink.Bond) {}), func(b Bond) string {
			if b.Mode != nil || b.MIIMonMs != nil || b.XmitHashPolicy != nil || b.ActiveSlave != nil || b.Primary != nil ||
				b.FailOverMAC != nil || b.PrimaryReselect != nil || b.TLBDynamicLB != nil || b.LACP != nil || b.MIIStatus != nil {
				return "unset values filled"
			}
			return ""
		}},
		{"active-backup", bond(func(b *netlink.Bond) {
			b.Mode, b.XmitHashPolicy, b.ActiveSlave, b.Primary = netlink.BOND_MODE_ACTIVE_BACKUP, netlink.BOND_XMIT_HASH_POLICY_LAYER2_3, 5, 4
			b.FailOverMac, b.PrimaryReselect = netlink.BOND_FAIL_OVER_MAC_ACTIVE, netlink.BOND_PRIMARY_RESELECT_FAILURE
			b.RawFlags = unix.IFF_UP
		}), func(b Bond) string {
			if str(b.Mode) != "active-backup" || b.XmitHashPolicy != nil || str(b.ActiveSlave) != "eth1" || str(b.Primary) != "eth0" ||
				str(b.FailOverMAC) != "active" || str(b.PrimaryReselect) != "failure" || b.LACP != nil || str(b.MIIStatus) != "down" {
				return jsonOf(t, b)
			}
			return ""
		}},
		{"unknown active slave index", bond(func(b *netlink.Bond) { b.Mode, b.ActiveSlave = 1, 99 }), func(b Bond) string {
			if b.ActiveSlave != nil {
				return "active slave " + *b.ActiveSlave
			}
			return ""
		}},
		{"balance-xor vlan+srcmac", bond(func(b *netlink.Bond) { b.Mode, b.XmitHashPolicy = 2, 5 }), func(b Bond) string {
			if str(b.Mode) != "balance-xor" || str(b.XmitHashPolicy) != "vlan+srcmac" {
				return jsonOf(t, b)
			}
			return ""
		}},
		{"balance-tlb static hashes", bond(func(b *netlink.Bond) { b.Mode, b.XmitHashPolicy, b.TlbDynamicLb = 5, 2, 0 }), func(b Bond) string {
			if str(b.Mode) != "balance-tlb" || str(b.XmitHashPolicy) != "layer2+3" || num(b.TLBDynamicLB) != "0" {
				return jsonOf(t, b)
			}
			return ""
		}},
		{"balance-tlb dynamic does not hash", bond(func(b *netlink.Bond) { b.Mode, b.XmitHashPolicy, b.TlbDynamicLb = 5, 2, 1 }), func(b Bond) string {
			if b.XmitHashPolicy != nil {
				return jsonOf(t, b)
			}
			return ""
		}},
		{"unknown enums", bond(func(b *netlink.Bond) { b.Mode, b.XmitHashPolicy, b.FailOverMac = 9, 9, 9 }), func(b Bond) string {
			if b.Mode != nil || b.XmitHashPolicy != nil || b.FailOverMAC != nil {
				return jsonOf(t, b)
			}
			return ""
		}},
		{"802.3ad configured actor system", bond(func(b *netlink.Bond) {
			b.Mode, b.LacpRate, b.AdSelect, b.MinLinks = 4, netlink.BOND_LACP_RATE_SLOW, netlink.BOND_AD_SELECT_BANDWIDTH, 1
			b.AdActorSysPrio, b.AdActorSystem = 100, mac("02:00:00:00:00:99")
			b.AdInfo = &netlink.BondAdInfo{AggregatorId: 3, NumPorts: 1, ActorKey: 9, PartnerKey: 1, PartnerMac: mac("00:00:00:00:00:00")}
		}), func(b Bond) string {
			l := b.LACP
			if l == nil || str(l.Rate) != "slow" || str(l.ADSelect) != "bandwidth" || num(l.MinLinks) != "1" ||
				str(l.SystemMAC) != "02:00:00:00:00:99" || l.SystemPriority == nil || *l.SystemPriority != 100 ||
				num(l.AggregatorID) != "3" || str(l.PartnerMAC) != "00:00:00:00:00:00" || l.NoActiveAggregator || l.Active != nil {
				return jsonOf(t, b)
			}
			return ""
		}},
		{"802.3ad without AdInfo is not 'no active aggregator' without attrs", bond(func(b *netlink.Bond) { b.Mode = 4 }), func(b Bond) string {
			if b.LACP == nil || b.LACP.NoActiveAggregator || b.LACP.AggregatorID != nil {
				return jsonOf(t, b)
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := FromNetlinkBond(tt.link, nil, slaveName)
			if b.Name != "bond0" || b.MTU == nil || *b.MTU != 1500 {
				t.Errorf("name %q mtu %v", b.Name, b.MTU)
			}
			if msg := tt.check(b); msg != "" {
				t.Error(msg)
			}
		})
	}
	// Every mode and policy by its kernel name.
	for i, m := range Modes {
		b := FromNetlinkBond(bond(func(b *netlink.Bond) { b.Mode = netlink.BondMode(i) }), nil, nil)
		if str(b.Mode) != m || str(b.Mode) != netlink.BondMode(i).String() {
			t.Errorf("mode %d = %s, want %s", i, str(b.Mode), m)
		}
	}
	for i, p := range HashPolicies {
		b := FromNetlinkBond(bond(func(b *netlink.Bond) { b.Mode, b.XmitHashPolicy = 2, netlink.BondXmitHashPolicy(i) }), nil, nil)
		if str(b.XmitHashPolicy) != p || p != netlink.BondXmitHashPolicy(i).String() {
			t.Errorf("policy %d = %s, want %s", i, str(b.XmitHashPolicy), p)
		}
	}
}

func TestFromNetlinkSlaveValues(t *testing.T) {
	link := func(bs *netlink.BondSlave) netlink.Link {
		v := &netlink.Veth{LinkAttrs: netlink.NewLinkAttrs()}
		v.Name, v.MTU, v.OperState = "eth0", 1500, netlink.OperLowerLayerDown
		if bs != nil {
			v.Slave = bs
		}
		return v
	}
	plain := FromNetlinkSlave(link(nil), nil)
	if plain.Name != "eth0" || *plain.MTU != 1500 || *plain.OperState != "lowerlayerdown" || plain.State != nil || plain.MIIStatus != nil || !plain.Counters.Empty() {
		t.Errorf("plain link: %s", jsonOf(t, plain))
	}
	for st, want := range map[netlink.BondSlaveState]string{netlink.BondStateActive: "active", netlink.BondStateBackup: "backup", 7: "<nil>"} {
		s := FromNetlinkSlave(link(&netlink.BondSlave{State: st}), nil)
		got := "<nil>"
		if s.State != nil {
			got = *s.State
		}
		if got != want {
			t.Errorf("state %d = %s, want %s", st, got, want)
		}
	}
	for mii, want := range map[netlink.BondSlaveMiiStatus]string{0: "up", 1: "going down", 2: "down", 3: "going back", 9: "<nil>"} {
		s := FromNetlinkSlave(link(&netlink.BondSlave{MiiStatus: mii}), nil)
		got := "<nil>"
		if s.MIIStatus != nil {
			got = *s.MIIStatus
		}
		if got != want {
			t.Errorf("mii %d = %s, want %s", mii, got, want)
		}
	}
	s := FromNetlinkSlave(link(&netlink.BondSlave{AggregatorId: 2, AdActorOperPortState: 61, AdPartnerOperPortState: 300}), nil)
	if *s.AggregatorID != 2 || *s.Actor.PortState != 61 || s.Partner.PortState != nil || s.PermHWAddr != nil {
		t.Errorf("lacp slave: %s", jsonOf(t, s))
	}
	for st, want := range map[netlink.LinkOperState]string{netlink.OperUnknown: "unknown", netlink.OperNotPresent: "notpresent",
		netlink.OperDown: "down", netlink.OperTesting: "testing", netlink.OperDormant: "dormant", netlink.OperUp: "up"} {
		if got := OperState(st); got == nil || *got != want {
			t.Errorf("operstate %d = %v, want %s", st, got, want)
		}
	}
	if OperState(7) != nil {
		t.Error("operstate 7 named")
	}
}

func TestNetlinkCounters(t *testing.T) {
	st := &netlink.LinkStatistics{RxBytes: 1, TxBytes: 2, RxPackets: 3, TxPackets: 4, RxErrors: 5, TxErrors: 6,
		RxDropped: 7, TxDropped: 8, RxOverErrors: 9, RxFifoErrors: 10, Multicast: 99}
	cs := NetlinkCounters(&netlink.LinkAttrs{Index: 7, Statistics: st})
	for c := Counter(0); c < NumCounters; c++ {
		if v, ok := cs.Get(c); !ok || v != uint64(c)+1 {
			t.Errorf("%v = %d, %v", c, v, ok)
		}
	}
	if cs := NetlinkCounters(&netlink.LinkAttrs{Index: 7}); !cs.Empty() {
		t.Error("nil statistics gave counters")
	}
	again := NetlinkCounters(&netlink.LinkAttrs{Index: 7, Statistics: st})
	other := NetlinkCounters(&netlink.LinkAttrs{Index: 8, Statistics: st})
	var unknown Counters
	if !again.Follows(&cs) || other.Follows(&cs) || !unknown.Follows(&other) {
		t.Error("Follows: want the same ifindex to follow, another not, an unknown one to follow any")
	}
}

func TestFromEthtoolLinkMode(t *testing.T) {
	tests := []struct {
		lm     *ethtool.LinkMode
		speed  int // -1: nil
		duplex string
	}{
		{&ethtool.LinkMode{SpeedMegabits: 10000, Duplex: ethtool.Full}, 10000, "full"},
		{&ethtool.LinkMode{SpeedMegabits: 100, Duplex: ethtool.Half}, 100, "half"},
		{&ethtool.LinkMode{SpeedMegabits: 4294967295, Duplex: ethtool.Unknown}, -1, ""},
		{&ethtool.LinkMode{SpeedMegabits: 0, Duplex: ethtool.Duplex(7)}, -1, ""},
		{nil, -1, ""},
	}
	for _, tt := range tests {
		sp, dup := FromEthtoolLinkMode(tt.lm)
		gotSp, gotDup := -1, ""
		if sp != nil {
			gotSp = *sp
		}
		if dup != nil {
			gotDup = *dup
		}
		if gotSp != tt.speed || gotDup != tt.duplex {
			t.Errorf("%+v: %d %q, want %d %q", tt.lm, gotSp, gotDup, tt.speed, tt.duplex)
		}
	}
}

func TestScanLinkMalformed(t *testing.T) {
	good := nltest.Link{Index: 9, Name: "x", MTU: 1, Master: 3, LinkInfo: slaveInfo(0, 0, 0, 0, 0)}.Bytes()
	for n := 0; n < len(good); n++ {
		// Truncated messages must not panic; the index survives once the
		// ifinfomsg is whole.
		scan, ok := ScanLink(good[:n])
		if ok != (n >= unix.SizeofIfInfomsg) || (ok && scan.Index != 9) {
			t.Fatalf("len %d: %+v %v", n, scan, ok)
		}
		ParseBondAttrs(good[:n])
		ParseSlaveAttrs(good[:n])
	}
	// An attribute claiming more than the message holds ends the walk.
	bad := append([]byte(nil), good...)
	binary.NativeEndian.PutUint16(bad[unix.SizeofIfInfomsg:], 0xffff)
	if scan, ok := ScanLink(bad); !ok || scan.Slave || scan.Master != 0 {
		t.Errorf("bad length: %+v", scan)
	}
}

func FuzzNetlinkMessage(f *testing.F) {
	f.Add(nltest.Link{Index: 7, Name: "bond0", MTU: 1500, LinkInfo: bondInfo6x()}.Bytes())
	f.Add(nltest.Link{Index: 3, Name: "e1", MTU: 1500, Master: 7, LinkInfo: slaveInfo(0, 0, 1, 63, 63)}.Bytes())
	f.Add(nltest.Link{Index: 1, Name: "lo", MTU: 65536}.Bytes())
	f.Fuzz(func(t *testing.T, msg []byte) {
		scan, ok := ScanLink(msg)
		attrs, isBond := ParseBondAttrs(msg)
		sa, isSlave := ParseSlaveAttrs(msg)
		if !ok && (isBond || isSlave) {
			t.Fatal("attributes from a message ScanLink rejects")
		}
		// ParseBondAttrs needs IFLA_INFO_DATA too, so it may say no where
		// ScanLink says yes, never the reverse.
		if isBond && !scan.Bond || isSlave && !scan.Slave {
			t.Fatalf("scan %+v, bond %v slave %v", scan, isBond, isSlave)
		}
		_ = attrs.Has(unix.IFLA_BOND_MODE)
		_ = sa.Has(unix.IFLA_BOND_SLAVE_STATE)
	})
}
