package fleet

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// sample is one series of a query's answer: name (or tag) and labels
// as "k=v" pairs.
func sample(v float64, labels ...string) Series {
	m := map[string]string{}
	for _, l := range labels {
		k, val, _ := strings.Cut(l, "=")
		m[k] = val
	}
	return Series{Labels: m, Value: v}
}

func TestAssemble(t *testing.T) {
	h1 := []string{"instance=h1:9100", "job=bondtop"}
	h2 := []string{"instance=h2:9100", "job=bondtop"}
	with := func(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }
	up := []Series{sample(1, with(h1, "__name__=up")...), sample(0, with(h2, "__name__=up")...),
		sample(1, "__name__=up", "instance=h3:9100", "job=bondtop")}
	gauges := []Series{
		sample(1, with(h1, "__name__=bondtop_bond_info", "bond=bond0", "mode=802.3ad", "xmit_hash_policy=layer3+4", "lacp_rate=fast", "ad_select=stable")...),
		sample(1, with(h1, "__name__=bondtop_bond_up", "bond=bond0")...),
		sample(2, with(h1, "__name__=bondtop_bond_slaves", "bond=bond0")...),
		sample(1, with(h1, "__name__=bondtop_bond_slaves_up", "bond=bond0")...),
		sample(1, with(h1, "__name__=bondtop_slave_up", "bond=bond0", "slave=eth10")...),
		sample(0, with(h1, "__name__=bondtop_slave_up", "bond=bond0", "slave=eth2")...),
		sample(1250000000, with(h1, "__name__=bondtop_slave_speed_bytes", "bond=bond0", "slave=eth2")...),
		sample(1, with(h1, "__name__=bondtop_slave_active", "bond=bond0", "slave=eth2")...),
		sample(1, with(h1, "__name__=bondtop_finding", "bond=bond0", "id=link-down", "severity=warning", "slave=eth2")...),
		sample(1, with(h1, "__name__=bondtop_finding", "bond=bond0", "id=lacp-no-partner", "severity=warning", "slave=eth2")...),
		sample(1, with(h1, "__name__=bondtop_finding", "bond=bond0", "id=lacp-no-partner", "severity=warning", "slave=eth10")...),
		sample(1, with(h1, "__name__=bondtop_bond_info", "bond=bond1", "mode=active-backup", "xmit_hash_policy=")...),
		sample(1000, with(h1, "__name__=bondtop_last_sample_timestamp_seconds")...),
		sample(2, with(h1, "__name__=bondtop_bond_active_aggregator_id", "bond=bond0")...),
		sample(1, with(h1, "__name__=bondtop_bond_active_aggregator_ports", "bond=bond0")...),
		sample(0, with(h1, "__name__=bondtop_bond_no_active_aggregator", "bond=bond0")...),
		sample(2, with(h1, "__name__=bondtop_slave_aggregator_id", "bond=bond0", "slave=eth10")...),
		sample(63, with(h1, "__name__=bondtop_slave_lacp_port_state", "bond=bond0", "slave=eth10", "side=actor")...),
		sample(71, with(h1, "__name__=bondtop_slave_lacp_port_state", "bond=bond0", "slave=eth10", "side=partner")...),
		sample(1, with(h1, "__name__=bondtop_slave_lacp_partner_info", "bond=bond0", "slave=eth10", "partner_mac=00:11:22:33:44:55", "partner_key=15", "partner_port=")...),
		sample(3, with(h1, "__name__=bondtop_slave_lacp_churned_total", "bond=bond0", "slave=eth10", "side=partner")...),
	}
	lastKnown := []Series{
		sample(1, with(h2, tagLabel+"=bondtop_bond_info", "bond=bond0", "mode=balance-xor")...),
		sample(1, with(h2, tagLabel+"=bondtop_slave_up", "bond=bond0", "slave=eno1")...),
		// a host that is up: its current values win
		sample(1, with(h1, tagLabel+"=bondtop_bond_info", "bond=bond0", "mode=balance-rr")...),
		sample(900, with(h2, tagLabel+"=bondtop_last_sample_timestamp_seconds")...),
	}
	rates := []Series{
		sample(1000, with(h1, tagLabel+"=bond_tx", "bond=bond0")...),
		sample(500, with(h1, tagLabel+"=slave_rx", "bond=bond0", "slave=eth2")...),
		sample(99, with(h2, tagLabel+"=bond_tx", "bond=bond0")...), // host down: no rate
		sample(99, with(h1, tagLabel+"=bond_tx", "bond=gone0")...), // no bond
	}
	f := Assemble(up, gauges, lastKnown, rates)
	var got []string
	for _, b := range f.Bonds {
		var sl, fs []string
		for _, s := range b.Slaves {
			sl = append(sl, fmt.Sprintf("%s:%s:%s:%s:%s:%s", s.Name, str(s.MIIStatus), str(s.State), num(s.SpeedMbps), flt(s.TxBps), flt(s.RxBps)))
		}
		for _, x := range b.Findings {
			fs = append(fs, x.ID+"/"+x.Severity+"/"+strings.Join(x.Slaves, ","))
		}
		got = append(got, fmt.Sprintf("%s %s %s up=%v mode=%s hash=%s mii=%s %s/%s tx=%s slaves=%v findings=%v",
			b.Instance, b.Job, b.Name, b.ExporterUp, str(b.Mode), str(b.XmitHashPolicy), str(b.MIIStatus), num(b.SlavesUp), num(b.SlavesTotal), flt(b.TxBps), sl, fs))
	}
	want := []string{
		"h2:9100 bondtop bond0 up=false mode=balance-xor hash=- mii=- -/- tx=- slaves=[eno1:up:-:-:-:-] findings=[]",
		"h1:9100 bondtop bond0 up=true mode=802.3ad hash=layer3+4 mii=up 1/2 tx=8000 slaves=[eth2:down:active:10000:-:4000 eth10:up:-:-:-:-] findings=[lacp-no-partner/warning/eth2,eth10 link-down/warning/eth2]",
		"h1:9100 bondtop bond1 up=true mode=active-backup hash=- mii=- -/- tx=- slaves=[] findings=[]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b := f.Bonds[1]; b.LACP == nil || str(b.LACP.Rate) != "fast" || num(b.LACP.AggregatorID) != "2" || num(b.LACP.NumPorts) != "1" || b.LACP.NoActiveAggregator {
		t.Errorf("lacp: %+v", b.LACP)
	}
	// The LACP details of a slave, in the local JSON's shape.
	js, err := json.Marshal(f.Bonds[1].Slaves[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"aggregator_id":2`, `"partner_churned_count":3`, `"actor_churned_count":null`,
		`"actor":{`, `"port_state":63,"port_state_flags":["activity","short_timeout","aggregation","synchronization","collecting","distributing"]`,
		`"partner":{`, `"system_mac":"00:11:22:33:44:55"`, `"oper_key":15`, `"port_number":null`, `"port_state":71,"port_state_flags":["activity","short_timeout","aggregation","defaulted"]`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("slave JSON %s\nlacks %s", js, want)
		}
	}
	var ex []string
	for _, e := range f.Exporters {
		last := "-"
		if e.LastSample != nil {
			last = fmt.Sprint(e.LastSample.Unix())
		}
		ex = append(ex, fmt.Sprintf("%s %s up=%v bonds=%d last=%s", e.Instance, e.Job, e.Up, e.Bonds, last))
	}
	if got, want := strings.Join(ex, "; "), "h2:9100 bondtop up=false bonds=1 last=900; h1:9100 bondtop up=true bonds=2 last=1000; h3:9100 bondtop up=true bonds=0 last=-"; got != want {
		t.Errorf("exporters: %s\nwant       %s", got, want)
	}
	// The data's age: from each exporter's last sample.
	f.age(time.Unix(1010, 0))
	var ages []string
	for _, b := range f.Bonds {
		ages = append(ages, b.Instance+"/"+b.Name+"="+flt(b.DataAgeSeconds))
	}
	if got, want := strings.Join(ages, " "), "h2:9100/bond0=110 h1:9100/bond0=10 h1:9100/bond1=10"; got != want {
		t.Errorf("ages: %s, want %s", got, want)
	}
}

func TestSortWorstFirst(t *testing.T) {
	up, down := "up", "down"
	bps := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	bonds := []Bond{
		{Instance: "h10", Name: "bond0", ExporterUp: true, TxBps: bps(10)},
		{Instance: "h2", Name: "bond0", ExporterUp: true, TxBps: bps(5), RxBps: bps(100)},
		{Instance: "h9", Name: "bond0", ExporterUp: true},
		{Instance: "h10", Name: "bond1", ExporterUp: true, SlavesUp: n(1), SlavesTotal: n(2)},
		{Instance: "h2", Name: "bond1", ExporterUp: true, MIIStatus: &down},
		{Instance: "h3", Name: "bond0", ExporterUp: true, Slaves: []Slave{{Name: "eth0", MIIStatus: &down}}},
		{Instance: "h10", Name: "bond2", ExporterUp: true, Findings: []Finding{{ID: "x", Severity: "warning"}}},
		{Instance: "h2", Name: "bond10", ExporterUp: true, Findings: []Finding{{ID: "x", Severity: "warning"}}},
		{Instance: "h2", Name: "bond9", ExporterUp: true, Findings: []Finding{{ID: "x", Severity: "info"}}, TxBps: bps(1)},
		{Instance: "h1", Name: "bond0", ExporterUp: false, MIIStatus: &up},
		{Instance: "h10", Name: "bond0", Job: "b", ExporterUp: true, Findings: []Finding{{ID: "w", Severity: "warning"}, {ID: "c", Severity: "critical"}}},
		{Instance: "h10", Name: "bond0", Job: "a", ExporterUp: false, Findings: []Finding{{ID: "c", Severity: "critical"}}},
		{Instance: "h9", Name: "bond0", Job: "z", ExporterUp: true, Findings: []Finding{{ID: "c", Severity: "critical"}}},
	}
	Sort(bonds)
	var got []string
	for _, b := range bonds {
		got = append(got, b.Instance+"/"+b.Name+b.Job)
	}
	want := "h9/bond0z h10/bond0a h10/bond0b h1/bond0 h2/bond10 h10/bond2 h2/bond1 h3/bond0 h10/bond1 h2/bond0 h10/bond0 h2/bond9 h9/bond0"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("order\n got %s\nwant %s", g, want)
	}
}

func str(p *string) string {
	if p == nil {
		return "-"
	}
	return *p
}

func num(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func flt(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}
