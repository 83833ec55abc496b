package fleet

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// testFleet is a fleet as Assemble makes it from answers: h1 up with an
// 802.3ad bond (a finding, rates) and an active-backup one; h2 down with
// its last bond; the same target under a second job.
func testFleet(now time.Time) *Fleet {
	h1 := []string{"instance=h1:9843", "job=bondtop"}
	h2 := []string{"instance=h2:9843", "job=bondtop"}
	h1b := []string{"instance=h1:9843", "job=edge"}
	with := func(base []string, more ...string) []string { return append(slices.Clone(base), more...) }
	up := []Series{sample(1, with(h1, "__name__=up")...), sample(0, with(h2, "__name__=up")...),
		sample(1, with(h1b, "__name__=up")...), sample(0, "__name__=up", "instance=h3:9843", "job=bondtop")}
	gauges := []Series{
		sample(1, with(h1, "__name__=bondtop_bond_info", "bond=bond0", "mode=802.3ad", "lacp_rate=fast")...),
		sample(1, with(h1, "__name__=bondtop_slave_up", "bond=bond0", "slave=eth0")...),
		sample(1, with(h1, "__name__=bondtop_slave_active", "bond=bond0", "slave=eth0")...),
		sample(0, with(h1, "__name__=bondtop_slave_up", "bond=bond0", "slave=eth1")...),
		sample(1, with(h1, "__name__=bondtop_finding", "bond=bond0", "id=link-down", "severity=warning", "slave=eth1")...),
		sample(1, with(h1, "__name__=bondtop_bond_info", "bond=bond1", "mode=active-backup")...),
		sample(1, with(h1, "__name__=bondtop_slave_up", "bond=bond1", "slave=eno1")...),
		sample(1, with(h1, "__name__=bondtop_slave_active", "bond=bond1", "slave=eno1")...),
		sample(1, with(h1, "__name__=bondtop_slave_up", "bond=bond1", "slave=eno2")...),
		sample(0, with(h1, "__name__=bondtop_slave_active", "bond=bond1", "slave=eno2")...),
		sample(float64(now.Add(-3*time.Second).Unix()), with(h1, "__name__=bondtop_last_sample_timestamp_seconds")...),
		sample(1, with(h1b, "__name__=bondtop_bond_info", "bond=bond0", "mode=802.3ad")...),
	}
	lastKnown := []Series{
		sample(1, with(h2, tagLabel+"=bondtop_bond_info", "bond=bond0", "mode=balance-xor")...),
		sample(float64(now.Add(-10*time.Minute).Unix()), with(h2, tagLabel+"=bondtop_last_sample_timestamp_seconds")...),
	}
	rates := []Series{
		sample(1000, with(h1, tagLabel+"=bond_tx", "bond=bond0")...),
		sample(2000, with(h1, tagLabel+"=bond_rx", "bond=bond0")...),
		sample(1000, with(h1, tagLabel+"=slave_tx", "bond=bond0", "slave=eth0")...),
		sample(2000, with(h1, tagLabel+"=slave_rx", "bond=bond0", "slave=eth0")...),
	}
	f := Assemble(up, gauges, lastKnown, rates)
	f.Time = now
	f.age(now)
	return f
}

func TestSourceShowsTheFleetAsBonds(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := NewSource(nil, 0)
	s.take(testFleet(now))

	var names []string
	for _, b := range s.reading {
		names = append(names, b.Name)
	}
	// In name order, as a Reading's bonds are; the same target under a
	// second job keeps its bonds apart.
	if got, want := strings.Join(names, " | "), "h1:9843/bond0 | h1:9843/bond0 (edge) | h1:9843/bond1 | h2:9843/bond0"; got != want {
		t.Errorf("bonds %s\nwant  %s", got, want)
	}
	// Worst first: the down host, the warning, then the rest (neither
	// moves bytes: by name).
	if got, want := strings.Join(s.Order(), " | "), "h2:9843/bond0 | h1:9843/bond0 | h1:9843/bond0 (edge) | h1:9843/bond1"; got != want {
		t.Errorf("order %s\nwant  %s", got, want)
	}

	bond := func(name string) *bonding.Bond {
		for i := range s.reading {
			if s.reading[i].Name == name {
				return &s.reading[i]
			}
		}
		t.Fatalf("no bond %s", name)
		return nil
	}
	if b := bond("h1:9843/bond1"); b.ActiveSlave == nil || *b.ActiveSlave != "eno1" {
		t.Errorf("active-backup: active slave %v, want eno1", b.ActiveSlave)
	}
	if b := bond("h1:9843/bond0"); b.ActiveSlave != nil || b.LACP == nil || *b.LACP.Rate != "fast" || len(b.Slaves) != 2 || *b.Slaves[1].MIIStatus != "down" {
		t.Errorf("802.3ad bond: %+v", b)
	}

	if rx, tx, ok := s.Rate("h1:9843/bond0", ""); !ok || rx != 16000 || tx != 8000 {
		t.Errorf("bond rate %v %v %v, want 16000 8000 bit/s", rx, tx, ok)
	}
	if rx, tx, ok := s.Rate("h1:9843/bond0", "eth0"); !ok || rx != 16000 || tx != 8000 {
		t.Errorf("slave rate %v %v %v", rx, tx, ok)
	}
	if _, _, ok := s.Rate("h2:9843/bond0", ""); ok {
		t.Error("a down host's bond has a rate")
	}

	fs := s.Findings("h1:9843/bond0")
	if len(fs) != 1 || fs[0].ID != "link-down" || fs[0].Severity != model.SeverityWarning || !slices.Equal(fs[0].Slaves, []string{"eth1"}) {
		t.Errorf("findings %+v", fs)
	}
	fs = s.Findings("h2:9843/bond0")
	if len(fs) != 1 || fs[0].ID != "exporter-down" || fs[0].Severity != model.SeverityCritical || !strings.Contains(fs[0].Message, "10m0s old") {
		t.Errorf("down host's findings %+v", fs)
	}

	if age, ok := s.DataAge("h1:9843/bond0", now.Add(2*time.Second)); !ok || age != 5*time.Second {
		t.Errorf("data age %v %v, want 5s (3 s at the read, 2 s since)", age, ok)
	}
	if _, ok := s.DataAge("h1:9843/bond0 (edge)", now); ok {
		t.Error("an exporter without a last sample has an age")
	}
}

// TestSourceKeepsTheLastFleet: a refresh that fails (a closed port: a
// real refusal) keeps the last fleet and says so, naming the URL; a
// first read that fails is an error.
func TestSourceKeepsTheLastFleet(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	c, err := New(Config{URL: url, Detail: DetailLinks, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSource(c, time.Second)
	if _, err := s.Read(); err == nil || !strings.Contains(err.Error(), url) {
		t.Fatalf("first read: %v, want an error naming %s", err, url)
	}
	then := time.Now().Add(-time.Minute)
	s.take(testFleet(then))
	s.tried = time.Time{}
	r, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Bonds) != 4 {
		t.Errorf("%d bonds kept, want 4", len(r.Bonds))
	}
	w := strings.Join(r.Warnings, "\n")
	if !strings.Contains(w, url) || !strings.Contains(w, "showing what it said at "+then.Format("15:04:05")) {
		t.Errorf("warnings do not say the data is old and from where:\n%s", w)
	}
	if !strings.Contains(w, "exporter h3:9843 (job bondtop) is down") {
		t.Errorf("the down exporter without bonds is not named:\n%s", w)
	}
}

// TestPastSamples: a target's tagged rate series become the bond's
// samples, one per time, in bit/s, slaves in natural order; another
// bond's series are left out.
func TestPastSamples(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(s ...int) []time.Time {
		var out []time.Time
		for _, v := range s {
			out = append(out, t0.Add(time.Duration(v)*15*time.Second))
		}
		return out
	}
	series := []rangeSeries{
		{Labels: map[string]string{"bond": "bond0", tagLabel: "bond_rx"}, Times: at(0, 1), Values: []float64{10, 20}},
		{Labels: map[string]string{"bond": "bond0", tagLabel: "bond_tx"}, Times: at(1), Values: []float64{5}},
		{Labels: map[string]string{"bond": "bond0", "slave": "eth10", tagLabel: "slave_rx"}, Times: at(0, 1), Values: []float64{1, 2}},
		{Labels: map[string]string{"bond": "bond0", "slave": "eth2", tagLabel: "slave_tx"}, Times: at(1), Values: []float64{3}},
		{Labels: map[string]string{"bond": "bond1", tagLabel: "bond_rx"}, Times: at(2), Values: []float64{99}},
	}
	times, samples, err := pastSamples("h:9843/bond0", "bond0", series)
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 2 || !times[0].Equal(at(0)[0]) || !times[1].Equal(at(1)[0]) {
		t.Fatalf("times %v", times)
	}
	var got []string
	for _, s := range samples {
		line := s.Name + " rx=" + flt(s.RxBps) + " tx=" + flt(s.TxBps)
		for _, sl := range s.Slaves {
			line += " " + sl.Name + ":" + flt(sl.RxBps) + "/" + flt(sl.TxBps)
		}
		got = append(got, line)
	}
	want := []string{
		"h:9843/bond0 rx=80 tx=- eth2:-/- eth10:8/-",
		"h:9843/bond0 rx=160 tx=40 eth2:-/24 eth10:16/-",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
