package metrics

import (
	"bytes"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/bondtop/bondtop/model"
)

// scrape serves the exporter over HTTP and parses what a Prometheus server
// would read.
func scrape(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(rawScrape(t, e)))
	if err != nil {
		t.Fatalf("not the Prometheus text format: %v", err)
	}
	return fams
}

// find returns the value of the family's metric with these labels.
func find(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range f.Metric {
		for _, lp := range m.Label {
			if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		}
	}
	t.Fatalf("no %s with labels %v", name, labels)
	return 0
}

// TestMetricsMatchSnapshot checks every exported family against the
// snapshot it came from, on the demo host (an 802.3ad and an active-backup
// bond), at a moment with a slave down and LACP details present.
func TestMetricsMatchSnapshot(t *testing.T) {
	now := time.Unix(1_700_000_100, 0) // a whole five minutes: the demo script's start
	clock := func() time.Time { return now }
	s := collector.NewSampler(demo.New(clock), collector.Options{Clock: clock})
	var snap *model.Snapshot
	for range 35 { // past the demo's first incident, at 30 s
		var err error
		if snap, err = s.Sample(); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	e := New()
	if fams := scrape(t, e); fams["bondtop_bond_up"] != nil {
		t.Fatal("metrics before the first snapshot")
	}
	e.Update(snap)
	fams := scrape(t, e)

	for _, b := range snap.Bonds {
		bl := map[string]string{"bond": b.Name}
		if got := find(t, fams, "bondtop_bond_transmit_bytes_total", bl); got != float64(*b.TxBytes) {
			t.Errorf("%s tx bytes %v, snapshot %v", b.Name, got, *b.TxBytes)
		}
		if got := find(t, fams, "bondtop_bond_slaves", bl); got != float64(len(b.Slaves)) {
			t.Errorf("%s slaves %v", b.Name, got)
		}
		if got := find(t, fams, "bondtop_bond_info", map[string]string{"bond": b.Name, "mode": *b.Mode}); got != 1 {
			t.Errorf("%s info %v", b.Name, got)
		}
		for _, sl := range b.Slaves {
			l := map[string]string{"bond": b.Name, "slave": sl.Name}
			if got := find(t, fams, "bondtop_slave_receive_bytes_total", l); got != float64(*sl.RxBytes) {
				t.Errorf("%s rx bytes %v, snapshot %v", sl.Name, got, *sl.RxBytes)
			}
			if got := find(t, fams, "bondtop_slave_receive_fifo_errors_total", l); got != float64(*sl.RxFifoErrors) {
				t.Errorf("%s fifo %v", sl.Name, got)
			}
			up := 0.0
			if *sl.MIIStatus == "up" {
				up = 1
			}
			if got := find(t, fams, "bondtop_slave_up", l); got != up {
				t.Errorf("%s up %v, mii %s", sl.Name, got, *sl.MIIStatus)
			}
			// OVS members have no link failure count.
			if sl.LinkFailureCount != nil {
				if got := find(t, fams, "bondtop_slave_link_failures_total", l); got != float64(*sl.LinkFailureCount) {
					t.Errorf("%s failures %v", sl.Name, got)
				}
			}
			if sl.Partner != nil {
				pl := map[string]string{"bond": b.Name, "slave": sl.Name, "side": "partner"}
				if got := find(t, fams, "bondtop_slave_lacp_port_state", pl); got != float64(*sl.Partner.PortState) {
					t.Errorf("%s partner state %v", sl.Name, got)
				}
				find(t, fams, "bondtop_slave_lacp_partner_info", map[string]string{"bond": b.Name, "slave": sl.Name, "partner_mac": *sl.Partner.SystemMAC})
			}
		}
	}
	// At 30-60 s the demo's ens2f0 is down: the alert's input.
	if got := find(t, fams, "bondtop_slave_up", map[string]string{"bond": "bond0", "slave": "ens2f0"}); got != 0 {
		t.Errorf("ens2f0 up = %v during its outage", got)
	}
	if got := find(t, fams, "bondtop_bond_slaves_up", map[string]string{"bond": "bond0"}); got != 3 {
		t.Errorf("bond0 slaves up = %v, want 3", got)
	}
	if fams["bondtop_bond_transmit_bytes_total"].GetType() != dto.MetricType_COUNTER {
		t.Error("byte counters must be counters")
	}
	// The demo's flow meter: the hash check and the map's fill, as the
	// snapshot has them, and no per-flow series.
	m := snap.Bond("bond0").Measured
	bl := map[string]string{"bond": "bond0"}
	if got := find(t, fams, "bondtop_hash_check_flows", bl); got != float64(m.Agreement.Flows) || got == 0 {
		t.Errorf("hash check flows %v, snapshot %v", got, m.Agreement.Flows)
	}
	if got := find(t, fams, "bondtop_hash_check_agree_flows", bl); got != float64(m.Agreement.Agree) {
		t.Errorf("hash check agree %v, snapshot %v", got, m.Agreement.Agree)
	}
	if got := find(t, fams, "bondtop_hash_check_bytes_agree_ratio", bl); got != *m.Agreement.BytesAgreeShare {
		t.Errorf("bytes agree %v", got)
	}
	if got := find(t, fams, "bondtop_traffic_flows", map[string]string{"bond": "bond0", "source": "ebpf"}); got != float64(len(m.Flows)) {
		t.Errorf("flows %v, snapshot %d", got, len(m.Flows))
	}
	if got := find(t, fams, "bondtop_flow_map_entries", nil); got != float64(m.MapEntries) {
		t.Errorf("map entries %v, snapshot %d", got, m.MapEntries)
	}
	if got := find(t, fams, "bondtop_traffic_lost_bytes_total", map[string]string{"bond": "bond0", "slave": "ens1f0", "direction": "rx"}); got != 0 {
		t.Errorf("lost bytes %v", got)
	}
	for name, f := range fams {
		if len(f.Metric) > 200 {
			t.Errorf("%s has %d series: per-flow series?", name, len(f.Metric))
		}
	}
}

// TestVanishedBondIsReported: a followed bond that is gone reads
// bondtop_bond_present 0, so an alert can fire on it.
func TestVanishedBondIsReported(t *testing.T) {
	e := New()
	e.Update(&model.Snapshot{Missing: []string{"bond7"}})
	if got := find(t, scrape(t, e), "bondtop_bond_present", map[string]string{"bond": "bond7"}); got != 0 {
		t.Fatalf("present = %v", got)
	}
}

// A bond or slave name that is not UTF-8 (Linux allows any bytes) gets
// its invalid bytes shown as \xNN, as bondtop's text output shows them,
// and costs neither its own metrics nor the others'.
func TestInvalidUTF8Labels(t *testing.T) {
	odd, good := "bond\xff\xfe", "bond0"
	up := "up"
	snap := &model.Snapshot{Bonds: []model.BondSample{
		{Bond: bonding.Bond{Name: odd, MIIStatus: &up}, Slaves: []model.SlaveSample{{Slave: bonding.Slave{Name: "eth\xc3", MIIStatus: &up}}}},
		{Bond: bonding.Bond{Name: good, MIIStatus: &up}},
	}}
	e := New()
	e.Update(snap)
	fams := scrape(t, e)
	if got := find(t, fams, "bondtop_bond_up", map[string]string{"bond": good}); got != 1 {
		t.Errorf("%s up = %v", good, got)
	}
	if got := find(t, fams, "bondtop_bond_up", map[string]string{"bond": `bond\xff\xfe`}); got != 1 {
		t.Errorf("the odd bond's up = %v", got)
	}
	find(t, fams, "bondtop_slave_up", map[string]string{"bond": `bond\xff\xfe`, "slave": `eth\xc3`})
	if snap.Bonds[0].Name != odd {
		t.Error("the snapshot was changed")
	}
}

// No label carries a character that acts on a terminal or reorders text:
// C0 controls, DEL, C1 controls and bidi overrides, from any source (here
// a name, an LLDP neighbour and a transceiver's EEPROM), are made visible,
// in the text format and in OpenMetrics alike.
func TestControlCharactersInLabels(t *testing.T) {
	up := "up"
	sysName := "sw\u202e1\u2066x"
	snap := &model.Snapshot{Bonds: []model.BondSample{{
		Bond: bonding.Bond{Name: "bond\x1b[2J", MIIStatus: &up},
		Slaves: []model.SlaveSample{{
			Slave:      bonding.Slave{Name: "eth\u009b0\x7f", MIIStatus: &up},
			SwitchSide: &model.SwitchSide{Neighbor: &neighbors.Neighbor{Protocol: "lldp", ChassisID: "c\r\n", SystemName: &sysName, PortID: "p\x00"}},
			Physical:   &model.Physical{Module: &module.Module{Vendor: "AC\u0085ME", Type: "\u202aSFP"}},
		}},
	}}}
	e := New()
	e.Update(snap)
	for _, accept := range []string{"", "application/openmetrics-text; version=1.0.0"} {
		text := string(rawScrapeAccept(t, e, accept))
		for line := range strings.Lines(text) {
			for _, r := range strings.TrimSuffix(line, "\n") {
				if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
					t.Fatalf("accept %q: %U in %q", accept, r, line)
				}
			}
		}
		for _, want := range []string{`bond="bond\\x1b[2J"`, `slave="eth\\u009b0\\x7f"`, `system_name="sw\\u202e1\\u2066x"`, `chassis_id="c\\x0d\\x0a"`, `vendor="AC\\u0085ME"`} {
			if !strings.Contains(text, want) {
				t.Errorf("accept %q: no %s in the scrape", accept, want)
			}
		}
	}
}

// A failed read shows as bondtop_read_success 0 and a counted error, with
// no stale bond metrics; the next good read brings them back.
func TestReadFailureIsAMetric(t *testing.T) {
	up := "up"
	snap := &model.Snapshot{Bonds: []model.BondSample{{Bond: bonding.Bond{Name: "bond0", MIIStatus: &up}}}}
	e := New()
	e.Update(snap)
	if got := find(t, scrape(t, e), "bondtop_read_success", nil); got != 1 {
		t.Fatalf("read_success %v after a good read", got)
	}
	e.ReadFailed()
	e.ReadFailed()
	fams := scrape(t, e)
	if got := find(t, fams, "bondtop_read_success", nil); got != 0 {
		t.Errorf("read_success %v after a failed read", got)
	}
	if got := find(t, fams, "bondtop_read_errors_total", nil); got != 2 {
		t.Errorf("read_errors_total %v, want 2", got)
	}
	if fams["bondtop_bond_up"] != nil {
		t.Error("stale bond metrics served after a failed read")
	}
	e.Update(snap)
	fams = scrape(t, e)
	if got := find(t, fams, "bondtop_bond_up", map[string]string{"bond": "bond0"}); got != 1 || find(t, fams, "bondtop_read_success", nil) != 1 {
		t.Error("a good read did not bring the metrics back")
	}
}
