package bonding

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// sysfs8023ad is an 802.3ad bond as sysfs shows it to root on a 6.x kernel;
// values as the kernel formats them ("name N" words, "N/A", trailing
// newlines).
func sysfs8023ad() fstest.MapFS {
	f := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s + "\n")} }
	return fstest.MapFS{
		"sys/class/net/bonding_masters":                               f("bond1 bond0"),
		"sys/class/net/bond0/bonding/mode":                            f("802.3ad 4"),
		"sys/class/net/bond0/bonding/xmit_hash_policy":                f("layer3+4 1"),
		"sys/class/net/bond0/bonding/lacp_rate":                       f("fast 1"),
		"sys/class/net/bond0/bonding/lacp_active":                     f("on 1"),
		"sys/class/net/bond0/bonding/ad_select":                       f("stable 0"),
		"sys/class/net/bond0/bonding/miimon":                          f("100"),
		"sys/class/net/bond0/bonding/updelay":                         f("0"),
		"sys/class/net/bond0/bonding/downdelay":                       f("0"),
		"sys/class/net/bond0/bonding/min_links":                       f("1"),
		"sys/class/net/bond0/bonding/mii_status":                      f("up"),
		"sys/class/net/bond0/bonding/primary":                         f(""),
		"sys/class/net/bond0/bonding/active_slave":                    f(""),
		"sys/class/net/bond0/bonding/ad_aggregator":                   f("2"),
		"sys/class/net/bond0/bonding/ad_num_ports":                    f("2"),
		"sys/class/net/bond0/bonding/ad_actor_key":                    f("15"),
		"sys/class/net/bond0/bonding/ad_partner_key":                  f("15"),
		"sys/class/net/bond0/bonding/ad_partner_mac":                  f("02:fc:ce:91:32:14"),
		"sys/class/net/bond0/bonding/ad_actor_sys_prio":               f("65535"),
		"sys/class/net/bond0/bonding/ad_actor_system":                 f("00:00:00:00:00:00"),
		"sys/class/net/bond0/bonding/slaves":                          f("eth1 eth0"),
		"sys/class/net/bond0/mtu":                                     f("9000"),
		"sys/class/net/bond0/address":                                 f("02:1d:22:fd:7e:72"),
		"sys/class/net/bond0/operstate":                               f("up"),
		"sys/class/net/eth0/bonding_slave/state":                      f("active"),
		"sys/class/net/eth0/bonding_slave/mii_status":                 f("up"),
		"sys/class/net/eth0/bonding_slave/link_failure_count":         f("3"),
		"sys/class/net/eth0/bonding_slave/perm_hwaddr":                f("52:54:00:12:34:56"),
		"sys/class/net/eth0/bonding_slave/queue_id":                   f("0"),
		"sys/class/net/eth0/bonding_slave/ad_aggregator_id":           f("2"),
		"sys/class/net/eth0/bonding_slave/ad_actor_oper_port_state":   f("63"),
		"sys/class/net/eth0/bonding_slave/ad_partner_oper_port_state": f("63"),
		"sys/class/net/eth0/speed":                                    f("10000"),
		"sys/class/net/eth0/duplex":                                   f("full"),
		"sys/class/net/eth0/mtu":                                      f("9000"),
		"sys/class/net/eth1/bonding_slave/state":                      f("active"),
		"sys/class/net/eth1/bonding_slave/mii_status":                 f("going back"),
		"sys/class/net/eth1/bonding_slave/ad_aggregator_id":           f("1"),
		"sys/class/net/eth1/bonding_slave/ad_actor_oper_port_state":   f("71"),
		"sys/class/net/eth1/bonding_slave/ad_partner_oper_port_state": f("1"),
		"sys/class/net/eth1/speed":                                    f("-1"),
		"sys/class/net/eth1/duplex":                                   f("unknown"),
	}
}

func TestReadSysfs8023AD(t *testing.T) {
	res := ReadSysfs(sysfs8023ad(), "bond0")
	if len(res.Warnings) != 0 || res.Hidden != 0 {
		t.Fatalf("warnings %v hidden %d", res.Warnings, res.Hidden)
	}
	b := res.Bond
	sysEqS(t, "mode", b.Mode, "802.3ad")
	sysEqS(t, "policy", b.XmitHashPolicy, "layer3+4")
	sysEqS(t, "mii", b.MIIStatus, "up")
	sysEqI(t, "miimon", b.MIIMonMs, 100)
	sysEqI(t, "mtu", b.MTU, 9000)
	if b.Primary != nil || b.ActiveSlave != nil {
		t.Errorf("empty primary/active_slave must be nil: %v %v", b.Primary, b.ActiveSlave)
	}
	l := b.LACP
	if l == nil || l.Active == nil || !*l.Active {
		t.Fatalf("lacp %+v", l)
	}
	sysEqS(t, "rate", l.Rate, "fast")
	sysEqS(t, "ad_select", l.ADSelect, "stable")
	sysEqI(t, "min_links", l.MinLinks, 1)
	sysEqI(t, "aggregator", l.AggregatorID, 2)
	sysEqI(t, "ports", l.NumPorts, 2)
	sysEqI(t, "actor key", l.ActorKey, 15)
	sysEqS(t, "partner mac", l.PartnerMAC, "02:fc:ce:91:32:14")
	sysEqI(t, "sys prio", l.SystemPriority, 65535)
	// ad_actor_system all zeros: not overridden, the bond's address is used.
	sysEqS(t, "system mac", l.SystemMAC, "02:1d:22:fd:7e:72")

	// Enslave order is bonding/slaves' order, not the alphabet.
	if len(b.Slaves) != 2 || b.Slaves[0].Name != "eth1" || b.Slaves[1].Name != "eth0" {
		t.Fatalf("slaves %+v", b.Slaves)
	}
	e0 := b.Slaves[1]
	sysEqS(t, "eth0 state", e0.State, "active")
	sysEqI(t, "eth0 failures", e0.LinkFailureCount, 3)
	sysEqI(t, "eth0 speed", e0.SpeedMbps, 10000)
	sysEqS(t, "eth0 duplex", e0.Duplex, "full")
	sysEqI(t, "eth0 agg", e0.AggregatorID, 2)
	if e0.Actor == nil || *e0.Actor.PortState != 63 || e0.Partner == nil || *e0.Partner.PortState != 63 {
		t.Fatalf("eth0 port states %+v %+v", e0.Actor, e0.Partner)
	}
	e1 := b.Slaves[0]
	sysEqS(t, "eth1 mii", e1.MIIStatus, "going back")
	if e1.SpeedMbps != nil || e1.Duplex != nil {
		t.Errorf("a down link's speed -1 and duplex unknown must be nil: %v %v", e1.SpeedMbps, e1.Duplex)
	}
	if !e1.Actor.PortState.Has(StateDefaulted) {
		t.Errorf("71 must have defaulted: %v", e1.Actor.PortState)
	}
	if e1.QueueID != nil || e1.MTU != nil {
		t.Errorf("absent files must be nil")
	}
}

func TestReadSysfsUnprivilegedAndGarbled(t *testing.T) {
	fsys := sysfs8023ad()
	for _, f := range []string{"ad_actor_key", "ad_partner_key", "ad_partner_mac", "ad_actor_sys_prio", "ad_actor_system"} {
		fsys["sys/class/net/bond0/bonding/"+f] = &fstest.MapFile{Data: []byte("\n")}
	}
	fsys["sys/class/net/bond0/bonding/miimon"] = &fstest.MapFile{Data: []byte("lots\n")}
	res := ReadSysfs(fsys, "bond0")
	if res.Hidden != 5 {
		t.Errorf("hidden = %d, want 5", res.Hidden)
	}
	if l := res.Bond.LACP; l.ActorKey != nil || l.PartnerMAC != nil || l.AggregatorID == nil {
		t.Errorf("root-only fields must be nil, the rest kept: %+v", l)
	}
	if res.Bond.MIIMonMs != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "/sys/class/net/bond0/bonding/miimon") {
		t.Errorf("garbled miimon: %v, warnings %v", res.Bond.MIIMonMs, res.Warnings)
	}
	if res.Bond.Mode == nil || len(res.Bond.Slaves) != 2 {
		t.Error("one garbled file must not lose the rest")
	}
}

func TestReadSysfsPolicyOnlyWhereItHashes(t *testing.T) {
	fsys := sysfs8023ad()
	fsys["sys/class/net/bond0/bonding/mode"] = &fstest.MapFile{Data: []byte("active-backup 1\n")}
	b := ReadSysfs(fsys, "bond0").Bond
	if b.XmitHashPolicy != nil || b.LACP != nil {
		t.Errorf("active-backup: policy %v lacp %v, want nil", b.XmitHashPolicy, b.LACP)
	}
}

func TestListBonds(t *testing.T) {
	names, err := ListBonds(sysfs8023ad())
	if err != nil || strings.Join(names, ",") != "bond0,bond1" {
		t.Fatalf("%v %v", names, err)
	}
	procOnly := fstest.MapFS{"proc/net/bonding/bond2": {Data: []byte("x")}}
	names, err = ListBonds(procOnly)
	if err != nil || strings.Join(names, ",") != "bond2" {
		t.Fatalf("%v %v", names, err)
	}
	_, err = ListBonds(fstest.MapFS{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no driver: %v", err)
	}
}

func TestReadStatistics(t *testing.T) {
	fsys := fstest.MapFS{
		"sys/class/net/eth0/statistics/rx_bytes":  {Data: []byte("18446744073709551615\n")},
		"sys/class/net/eth0/statistics/tx_bytes":  {Data: []byte("12\n")},
		"sys/class/net/eth0/statistics/rx_errors": {Data: []byte("-1\n")},
	}
	cs, warnings := ReadStatistics(fsys, "eth0")
	if v, ok := cs.Get(RxBytes); !ok || v != 1<<64-1 {
		t.Errorf("rx_bytes %v %v", v, ok)
	}
	if v, ok := cs.Get(TxBytes); !ok || v != 12 {
		t.Errorf("tx_bytes %v %v", v, ok)
	}
	if cs.Has(RxErrors) || cs.Has(RxPackets) {
		t.Error("garbled and absent counters must be absent")
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "rx_errors") {
		t.Errorf("warnings %v", warnings)
	}
}

const netDevSample = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:  123456     789    0    0    0     0          0         0   123456     789    0    0    0     0       0          0
  eth0: 9876543210 1234567 1 2 3 4 0 10 1111 22 5 6 0 0 0 0
 bond0:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16
`

func TestParseNetDev(t *testing.T) {
	m, warnings := ParseNetDev([]byte(netDevSample))
	if len(warnings) != 0 || len(m) != 3 {
		t.Fatalf("%v %v", m, warnings)
	}
	e := m["eth0"]
	for c, want := range map[Counter]uint64{RxBytes: 9876543210, RxPackets: 1234567, RxErrors: 1, RxDropped: 2, RxFifoErrors: 3, TxBytes: 1111, TxPackets: 22, TxErrors: 5, TxDropped: 6} {
		if v, ok := e.Get(c); !ok || v != want {
			t.Errorf("eth0 %s = %d %v, want %d", c, v, ok, want)
		}
	}
	if e.Has(RxOverErrors) {
		t.Error("/proc/net/dev has no rx_over_errors column")
	}
	bond0 := m["bond0"]
	if v, _ := bond0.Get(TxBytes); v != 9 {
		t.Errorf("bond0 with no space after the colon: tx_bytes %d", v)
	}
	_, warnings = ParseNetDev([]byte("eth9: 1 2 x\n"))
	if len(warnings) != 1 {
		t.Errorf("garbled line: %v", warnings)
	}
}

func FuzzParseNetDev(f *testing.F) {
	f.Add([]byte(netDevSample))
	f.Add([]byte("eth0: 1 2\n:\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _ := ParseNetDev(data)
		for name := range m {
			if strings.Contains(name, ":") {
				t.Fatalf("interface name with a colon: %q", name)
			}
		}
	})
}

// FuzzReadSysfs puts arbitrary bytes in every attribute of a bond's sysfs
// directory: the reader must never panic and never invent a value.
func FuzzReadSysfs(f *testing.F) {
	f.Add([]byte("802.3ad 4\n"), []byte("eth0 eth1"), []byte("63"))
	f.Add([]byte(""), []byte(" "), []byte("N/A"))
	f.Add([]byte("balance-tlb 5"), []byte("eth0"), []byte("-1"))
	f.Fuzz(func(t *testing.T, mode, slaves, value []byte) {
		fsys := sysfs8023ad()
		fsys["sys/class/net/bond0/bonding/mode"] = &fstest.MapFile{Data: mode}
		fsys["sys/class/net/bond0/bonding/slaves"] = &fstest.MapFile{Data: slaves}
		for _, p := range []string{"bond0/bonding/miimon", "bond0/bonding/ad_aggregator", "bond0/bonding/tlb_dynamic_lb", "eth0/bonding_slave/ad_actor_oper_port_state", "eth0/speed", "eth0/bonding_slave/link_failure_count"} {
			fsys["sys/class/net/"+p] = &fstest.MapFile{Data: value}
		}
		res := ReadSysfs(fsys, "bond0")
		for _, s := range res.Bond.Slaves {
			if s.Name == "" || strings.ContainsAny(s.Name, " \t\n") {
				t.Fatalf("bad slave name %q", s.Name)
			}
			if s.SpeedMbps != nil && *s.SpeedMbps <= 0 {
				t.Fatalf("speed %d must be nil", *s.SpeedMbps)
			}
		}
	})
}

func sysEqS(t *testing.T, what string, got *string, want string) {
	t.Helper()
	if got == nil || *got != want {
		t.Errorf("%s = %v, want %q", what, sysShow(got), want)
	}
}

func sysEqI(t *testing.T, what string, got *int, want int) {
	t.Helper()
	if got == nil || *got != want {
		t.Errorf("%s = %v, want %d", what, sysShow(got), want)
	}
}

func sysShow[T any](p *T) any {
	if p == nil {
		return "nil"
	}
	return *p
}
