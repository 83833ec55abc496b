package diagnose

import (
	"slices"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/bondtop/bondtop/model"
)

// heard gives a slave the LLDP neighbour chassis/port, with changes.
func heard(s model.SlaveSample, chassis, port string, change func(*neighbors.Neighbor)) model.SlaveSample {
	n := &neighbors.Neighbor{Protocol: "lldp", ChassisID: chassis, SystemName: new("sw-" + chassis[len(chassis)-2:]), PortID: port, TTLSeconds: 120,
		Aggregation: &neighbors.Aggregation{Capable: true, Enabled: true}, MaxFrameSize: new(9216), PortVLANID: new(10)}
	if change != nil {
		change(n)
	}
	side := &model.SwitchSide{Neighbor: n}
	if s.SwitchSide != nil {
		c := *s.SwitchSide
		c.Neighbor = n
		side = &c
	}
	s.SwitchSide = side
	return s
}

func counted(s model.SlaveSample, rx uint64, silent float64, illegal uint64, carrierDown uint64) model.SlaveSample {
	side := model.SwitchSide{}
	if s.SwitchSide != nil {
		side = *s.SwitchSide
	}
	side.LACPDU = &model.LACPDUSample{LACPDUCounters: bonding.LACPDUCounters{Rx: rx, Tx: rx, IllegalRx: illegal}, SilentSeconds: silent}
	side.Carrier = &bonding.CarrierCounts{Up: carrierDown + 1, Down: carrierDown}
	s.SwitchSide = &side
	return s
}

func findingIDs(fs []Finding) []string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	return ids
}

// expect checks that id is among the findings exactly when want, and that
// a present one names the slaves.
func expect(t *testing.T, name string, fs []Finding, id string, want bool, slaves ...string) {
	t.Helper()
	i := slices.IndexFunc(fs, func(f Finding) bool { return f.ID == id })
	if (i >= 0) != want {
		t.Errorf("%s: %s present=%v, want %v (findings %v)", name, id, i >= 0, want, findingIDs(fs))
		return
	}
	if i >= 0 {
		if !slices.Equal(fs[i].Slaves, slaves) {
			t.Errorf("%s: %s names %v, want %v", name, id, fs[i].Slaves, slaves)
		}
		if fs[i].Message == "" || !strings.Contains(fs[i].Detail, ".") {
			t.Errorf("%s: %s lacks a message or advice: %+v", name, id, fs[i])
		}
	}
}

func TestNotMLAG(t *testing.T) {
	mlag := lacpBond(heard(lacpSlave("eth0", 1), "02:aa:00:00:00:01", "Eth1/1", nil), heard(lacpSlave("eth1", 2), "02:bb:00:00:00:02", "Eth1/1", nil))
	expect(t, "MLAG pair (one LACP system)", analyzeOne(mlag), IDNotMLAG, false)

	split := lacpBond(heard(lacpSlave("eth0", 1), "02:aa:00:00:00:01", "Eth1/1", nil), heard(lacpSlave("eth1", 2), "02:bb:00:00:00:02", "Eth1/1", nil))
	split.Slaves[1].Partner.SystemMAC = new("02:bb:00:00:00:99")
	fs := analyzeOne(split)
	expect(t, "two switches, two LACP systems", fs, IDNotMLAG, true, "eth0", "eth1")

	oneSwitch := lacpBond(heard(lacpSlave("eth0", 1), "02:aa:00:00:00:01", "Eth1/1", nil), heard(lacpSlave("eth1", 2), "02:aa:00:00:00:01", "Eth1/2", nil))
	oneSwitch.Slaves[1].Partner.SystemMAC = new("02:bb:00:00:00:99")
	expect(t, "one switch", analyzeOne(oneSwitch), IDNotMLAG, false)
}

func TestSwitchLAGMismatch(t *testing.T) {
	noLAG := func(n *neighbors.Neighbor) { n.Aggregation.Enabled = false }
	ok := lacpBond(heard(lacpSlave("eth0", 1), "02:aa:00:00:00:01", "Eth1/1", nil), heard(lacpSlave("eth1", 2), "02:aa:00:00:00:01", "Eth1/2", nil))
	expect(t, "802.3ad on an aggregated port", analyzeOne(ok), IDSwitchLAG, false)
	bad := lacpBond(heard(lacpSlave("eth0", 1), "02:aa:00:00:00:01", "Eth1/1", nil), heard(lacpSlave("eth1", 2), "02:aa:00:00:00:01", "Eth1/2", noLAG))
	expect(t, "802.3ad on a plain port", analyzeOne(bad), IDSwitchLAG, true, "eth1")
	xor := xorBond(heard(slave("eth0", 10000), "02:aa:00:00:00:01", "Eth1/1", nil), heard(slave("eth1", 10000), "02:aa:00:00:00:01", "Eth1/2", nil))
	expect(t, "static xor on an aggregated port", analyzeOne(xor), IDSwitchLAG, true, "eth0", "eth1")
	xorPlain := xorBond(heard(slave("eth0", 10000), "02:aa:00:00:00:01", "Eth1/1", noLAG))
	expect(t, "static xor on a plain port", analyzeOne(xorPlain), IDSwitchLAG, false)
}

func TestSwitchFrameSize(t *testing.T) {
	small := func(n *neighbors.Neighbor) { n.MaxFrameSize = new(1522) }
	b := xorBond(heard(slave("eth0", 10000), "02:aa:00:00:00:01", "Eth1/1", small), heard(slave("eth1", 10000), "02:aa:00:00:00:01", "Eth1/2", nil))
	expect(t, "MTU 1500, max frame 1522", analyzeOne(b), IDSwitchFrameSize, false)
	b.MTU = new(9000)
	fs := analyzeOne(b)
	expect(t, "MTU 9000, max frame 1522", fs, IDSwitchFrameSize, true, "eth0")
}

func TestSwitchVLANMismatch(t *testing.T) {
	b := xorBond(heard(slave("eth0", 10000), "02:aa:00:00:00:01", "Eth1/1", nil), heard(slave("eth1", 10000), "02:aa:00:00:00:01", "Eth1/2", nil))
	expect(t, "same port VLAN", analyzeOne(b), IDSwitchVLAN, false)
	b.Slaves[1] = heard(slave("eth1", 10000), "02:aa:00:00:00:01", "Eth1/2", func(n *neighbors.Neighbor) { n.PortVLANID = new(20) })
	expect(t, "VLAN 10 and 20", analyzeOne(b), IDSwitchVLAN, true, "eth0", "eth1")
}

func TestLACPDUSilence(t *testing.T) {
	talking := lacpBond(counted(lacpSlave("eth0", 1), 100, 0.8, 0, 0), counted(lacpSlave("eth1", 2), 100, 0.9, 0, 0))
	expect(t, "LACPDUs every second", analyzeOne(talking), IDLACPDUSilent, false)
	silent := lacpBond(counted(lacpSlave("eth0", 1), 100, 0.8, 0, 0), counted(lacpSlave("eth1", 2), 100, 3.5, 0, 0))
	expect(t, "eth1 silent 3.5 s at lacp_rate fast", analyzeOne(silent), IDLACPDUSilent, true, "eth1")

	slow := lacpBond(counted(lacpSlave("eth0", 1), 100, 20, 0, 0))
	st := *slow.Slaves[0].Actor.PortState &^ bonding.StateShortTimeout
	slow.Slaves[0].Actor.PortState = &st
	expect(t, "20 s at lacp_rate slow", analyzeOne(slow), IDLACPDUSilent, false)

	before := lacpBond(counted(lacpSlave("eth0", 1), 100, 0, 0, 0))
	after := lacpBond(counted(lacpSlave("eth0", 1), 101, 0, 3, 0))
	expect(t, "illegal LACPDUs rising", analyzeOne(before, after), IDLACPDUBad, true, "eth0")
	expect(t, "illegal LACPDUs standing", analyzeOne(after, after), IDLACPDUBad, false)
}

func TestCarrierFlapsUnseen(t *testing.T) {
	before := lacpBond(counted(lacpSlave("eth0", 1), 1, 0, 0, 1), counted(lacpSlave("eth1", 2), 1, 0, 0, 1))
	after := lacpBond(counted(lacpSlave("eth0", 1), 2, 0, 0, 3), counted(lacpSlave("eth1", 2), 2, 0, 0, 2))
	after.Slaves[1].LinkFailureCount = new(1) // eth1's flap was seen by miimon
	fs := analyzeOne(before, after)
	expect(t, "carrier down count +2 with MII up", fs, IDCarrierUnseen, true, "eth0")
	expect(t, "steady carrier", analyzeOne(before, before), IDCarrierUnseen, false)
}

func TestInactiveSlaveDrops(t *testing.T) {
	ab := func(drops uint64) model.BondSample {
		b := xorBond(slave("eth0", 1000), slave("eth1", 1000))
		b.Mode = new(bonding.ModeActiveBackup)
		b.Slaves[1].State = new("backup")
		for i := range b.Slaves {
			b.Slaves[i].Interval = &model.ErrorCounts{RxDropped: new(uint64(0))}
		}
		b.Slaves[1].Interval.RxDropped = new(drops)
		return b
	}
	expect(t, "backup slave dropping", analyzeOne(ab(0), ab(40)), IDInactiveSlaveDrops, true, "eth1")
	expect(t, "backup slave quiet", analyzeOne(ab(0), ab(0)), IDInactiveSlaveDrops, false)
	fs := analyzeOne(ab(0), ab(40))
	for _, f := range fs {
		if f.Severity != Info && slices.Contains(f.Slaves, "eth1") {
			t.Errorf("a backup slave's drops alarm: %+v", f)
		}
	}
}

func TestPartnerView(t *testing.T) {
	viewed := func(s model.SlaveSample, mac string, key, port int) model.SlaveSample {
		s = counted(s, 10, 0.5, 0, 0)
		s.LACPDU.PartnerView = &neighbors.LACPPort{SystemMAC: mac, Key: key, Port: port}
		return s
	}
	ok := lacpBond(viewed(lacpSlave("eth0", 1), "02:00:00:00:00:01", 15, 1), viewed(lacpSlave("eth1", 2), "02:00:00:00:00:01", 15, 2))
	expect(t, "the partner sees our actor", analyzeOne(ok), IDPartnerView, false)
	swapped := lacpBond(viewed(lacpSlave("eth0", 1), "02:00:00:00:00:01", 15, 1), viewed(lacpSlave("eth1", 2), "02:00:00:00:00:01", 15, 1))
	fs := analyzeOne(swapped)
	expect(t, "eth1's partner believes it talks to port 1", fs, IDPartnerView, true, "eth1")
	deaf := lacpBond(viewed(lacpSlave("eth0", 1), "00:00:00:00:00:00", 0, 0))
	fs = analyzeOne(deaf)
	expect(t, "the partner heard nothing from us", fs, IDPartnerView, true, "eth0")
	if i := slices.IndexFunc(fs, func(f Finding) bool { return f.ID == IDPartnerView }); !strings.Contains(fs[i].Detail, "one direction") {
		t.Errorf("a deaf partner's finding: %+v", fs[i])
	}
}

func TestFirmwareLLDP(t *testing.T) {
	agent := func(s model.SlaveSample, on bool) model.SlaveSample {
		s.SwitchSide = &model.SwitchSide{FirmwareLLDPAgent: &on}
		return s
	}
	b := xorBond(agent(slave("eth0", 10000), true), agent(slave("eth1", 10000), false))
	expect(t, "eth0's firmware agent on, nothing heard", analyzeOne(b), IDFirmwareLLDP, true, "eth0")
	b = xorBond(agent(slave("eth0", 10000), false), agent(slave("eth1", 10000), false))
	expect(t, "firmware agents off", analyzeOne(b), IDFirmwareLLDP, false)
	heardAnyway := xorBond(heard(agent(slave("eth0", 10000), true), "02:aa:00:00:00:01", "Eth1/1", nil))
	expect(t, "agent on, but the switch is heard", analyzeOne(heardAnyway), IDFirmwareLLDP, false)
}
