package promtext

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The judges of these tests are the Prometheus project's own: its text
// parser (expfmt.TextParser) must read back what was added, and its text
// writer (expfmt.MetricFamilyToText, the one the Go client served with)
// must write the same bytes from the same families, sorted as the Go
// client's registry sorted them.

// added is one call of Scrape.Add, as the tests' expectation sees it.
type added struct {
	desc   *Desc
	value  float64
	labels []string // in the caller's order
}

// callerLabels returns the label names of d in the order Add takes them.
func (d *Desc) callerLabels() []string {
	out := make([]string, len(d.labels))
	for i, j := range d.order {
		out[j] = d.labels[i]
	}
	return out
}

// expected returns the families the adds must give: label values repaired,
// the first of two samples with one label set kept, label pairs sorted by
// name, metrics by label values, families by name (map order does not
// matter: expfmt's parser returns a map, and want is compared in name
// order).
func expected(adds []added) map[string]*dto.MetricFamily {
	fams := map[string]*dto.MetricFamily{}
	first := map[string]*Desc{} // name -> the descriptor made first
	seen := map[string]bool{}
	for _, a := range adds {
		if d := first[a.desc.name]; d == nil || a.desc.id < d.id {
			first[a.desc.name] = a.desc
		}
	}
	for _, a := range adds {
		d := a.desc
		if first[d.name] != d {
			continue
		}
		f := fams[d.name]
		if f == nil {
			typ := dto.MetricType_GAUGE
			if d.typ == Counter {
				typ = dto.MetricType_COUNTER
			}
			f = &dto.MetricFamily{Name: new(d.name), Help: new(d.help), Type: &typ}
			fams[d.name] = f
		}
		m := &dto.Metric{}
		key := d.name
		for i, n := range d.callerLabels() {
			v := strings.ToValidUTF8(a.labels[i], "\uFFFD")
			m.Label = append(m.Label, &dto.LabelPair{Name: new(n), Value: new(v)})
		}
		slices.SortFunc(m.Label, func(x, y *dto.LabelPair) int { return strings.Compare(x.GetName(), y.GetName()) })
		for _, lp := range m.Label {
			key += "\xff" + lp.GetValue()
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if d.typ == Counter {
			m.Counter = &dto.Counter{Value: new(a.value)}
		} else {
			m.Gauge = &dto.Gauge{Value: new(a.value)}
		}
		f.Metric = append(f.Metric, m)
	}
	for _, f := range fams {
		slices.SortStableFunc(f.Metric, func(x, y *dto.Metric) int {
			for i := range x.Label {
				if c := strings.Compare(x.Label[i].GetValue(), y.Label[i].GetValue()); c != 0 {
					return c
				}
			}
			return 0
		})
	}
	return fams
}

// reference is the text the Go client's writer makes of the families,
// in name order.
func reference(t testing.TB, fams map[string]*dto.MetricFamily) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range fams {
			if !yield(n) {
				return
			}
		}
	}) {
		if _, err := expfmt.MetricFamilyToText(&b, fams[name]); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// write adds adds to a fresh Scrape and returns its text.
func write(t testing.TB, adds []added) []byte {
	t.Helper()
	var s Scrape
	for _, a := range adds {
		s.Add(a.desc, a.value, a.labels...)
	}
	var b bytes.Buffer
	if _, err := s.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// parse reads text as a Prometheus server's scrape of it would.
func parse(t testing.TB, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("expfmt cannot parse the text: %v\n%s", err, text)
	}
	return fams
}

// check compares what adds wrote with the model, both as parsed and as
// bytes.
func check(t testing.TB, adds []added) []byte {
	t.Helper()
	text := write(t, adds)
	want := expected(adds)
	got := parse(t, text)
	if len(got) != len(want) {
		t.Errorf("%d families, want %d\n%s", len(got), len(want), text)
	}
	for name, w := range want {
		g := got[name]
		if g == nil {
			t.Errorf("no family %s\n%s", name, text)
			continue
		}
		if g.GetHelp() != w.GetHelp() || g.GetType() != w.GetType() {
			t.Errorf("%s: help %q type %v, want %q %v", name, g.GetHelp(), g.GetType(), w.GetHelp(), w.GetType())
		}
		if len(g.Metric) != len(w.Metric) {
			t.Errorf("%s: %d samples, want %d\n%s", name, len(g.Metric), len(w.Metric), text)
			continue
		}
		for i, wm := range w.Metric {
			gm := g.Metric[i]
			if !slices.EqualFunc(gm.Label, wm.Label, func(x, y *dto.LabelPair) bool {
				return x.GetName() == y.GetName() && x.GetValue() == y.GetValue()
			}) {
				t.Errorf("%s sample %d: labels %v, want %v", name, i, gm.Label, wm.Label)
			}
			gv, wv := gm.GetGauge().GetValue(), wm.GetGauge().GetValue()
			if w.GetType() == dto.MetricType_COUNTER {
				gv, wv = gm.GetCounter().GetValue(), wm.GetCounter().GetValue()
			}
			if gv != wv && !(math.IsNaN(gv) && math.IsNaN(wv)) {
				t.Errorf("%s sample %d: value %v, want %v", name, i, gv, wv)
			}
		}
	}
	if ref := reference(t, want); !bytes.Equal(text, ref) {
		t.Errorf("the text differs from the Go client's writer's:\n%s\nwant:\n%s", text, ref)
	}
	return text
}

var (
	descInfo = NewDesc("test_bond_info", "A bond's \"configuration\" as labels;\nalways 1 \\o/.", Gauge, "bond", "mode", "ad_select")
	descUp   = NewDesc("test_slave_up", "1 when up.", Gauge, "slave", "bond")
	descRx   = NewDesc("test_receive_bytes_total", "Bytes received.", Counter, "bond")
	descOne  = NewDesc("test_bonds", "Bonds.", Gauge)
	descOdd  = NewDesc("test_odd", " \t leading blanks and \xff invalid UTF-8", Gauge, "v")
)

// TestWriteMatchesGoClient: escapes, special values, invalid UTF-8, label
// order and duplicates come out as the Go client wrote them, and read
// back as added.
func TestWriteMatchesGoClient(t *testing.T) {
	adds := []added{
		{descUp, 1, []string{"eth1", "bond0"}},
		{descUp, 0, []string{"eth0", "bond1"}},
		{descUp, 1, []string{"eth0", "bond0"}},
		{descInfo, 1, []string{"bond0", "802.3ad", "stable"}},
		{descInfo, 1, []string{"b\"o\\n\nd", "", "bandwidth"}},
		{descInfo, 1, []string{"bond\xff\xfe", "active-backup", ""}},
		{descRx, math.Inf(1), []string{"bond0"}},
		{descRx, math.Inf(-1), []string{"bond1"}},
		{descRx, math.NaN(), []string{"bond2"}},
		{descRx, math.Copysign(0, -1), []string{"bond3"}},
		{descRx, 1e21, []string{"bond4"}},
		{descRx, 5e-324, []string{"bond5"}},
		{descRx, 12345678901234567890, []string{"bond6"}},
		{descRx, -1, []string{"bond7"}},
		{descOne, 2, nil},
		{descOdd, 0.1, []string{"\xc3"}},
	}
	text := check(t, adds)
	for _, want := range []string{
		// Labels by name; values escaped; invalid bytes one U+FFFD a run.
		`test_bond_info{ad_select="bandwidth",bond="b\"o\\n\nd",mode=""} 1` + "\n",
		`test_bond_info{ad_select="",bond="bond` + "\uFFFD" + `",mode="active-backup"} 1` + "\n",
		"# HELP test_bond_info A bond's \"configuration\" as labels;\\nalways 1 \\\\o/.\n# TYPE test_bond_info gauge\n",
		"# HELP test_odd leading blanks and \uFFFD invalid UTF-8\n",
		"test_receive_bytes_total{bond=\"bond0\"} +Inf\ntest_receive_bytes_total{bond=\"bond1\"} -Inf\ntest_receive_bytes_total{bond=\"bond2\"} NaN\ntest_receive_bytes_total{bond=\"bond3\"} 0\n",
		"test_receive_bytes_total{bond=\"bond4\"} 1e+21\n",
		"test_receive_bytes_total{bond=\"bond6\"} 1.2345678901234567e+19\n",
		"# TYPE test_receive_bytes_total counter\n",
		"test_bonds 2\n",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}

// TestSortOrder: families by name, samples by their label values taken
// in the order of the sorted label names (not the order Add took them
// in), whatever the order of the adds.
func TestSortOrder(t *testing.T) {
	adds := []added{
		{descUp, 1, []string{"a", "bond1"}},
		{descOne, 1, nil},
		{descUp, 1, []string{"b", "bond0"}},
		{descUp, 1, []string{"a", "bond0"}},
		{descInfo, 1, []string{"z", "m", "a"}},
		{descInfo, 1, []string{"a", "m", "b"}},
	}
	want := `# HELP test_bond_info A bond's "configuration" as labels;\nalways 1 \\o/.
# TYPE test_bond_info gauge
test_bond_info{ad_select="a",bond="z",mode="m"} 1
test_bond_info{ad_select="b",bond="a",mode="m"} 1
# HELP test_bonds Bonds.
# TYPE test_bonds gauge
test_bonds 1
# HELP test_slave_up 1 when up.
# TYPE test_slave_up gauge
test_slave_up{bond="bond0",slave="a"} 1
test_slave_up{bond="bond0",slave="b"} 1
test_slave_up{bond="bond1",slave="a"} 1
`
	for range 3 {
		if got := string(check(t, adds)); got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
		slices.Reverse(adds)
	}
}

// TestDuplicatesDropped: a second sample with a family's label values,
// also one that only invalid UTF-8 told apart, is dropped and the first
// one kept; the scrape stays valid. Of two descriptors with one name,
// the first made is the family.
func TestDuplicatesDropped(t *testing.T) {
	again := NewDesc("test_slave_up", "Made twice.", Counter, "slave", "bond")
	adds := []added{
		{descUp, 1, []string{"eth0", "bond0"}},
		{descUp, 7, []string{"eth0", "bond0"}},
		{descUp, 2, []string{"eth\xff", "bond0"}},
		{descUp, 8, []string{"eth\xfe\xfd", "bond0"}},
		{again, 9, []string{"eth9", "bond0"}},
		{descOne, 3, nil},
		{descOne, 4, nil},
	}
	text := string(check(t, adds))
	want := "# HELP test_bonds Bonds.\n# TYPE test_bonds gauge\ntest_bonds 3\n" +
		"# HELP test_slave_up 1 when up.\n# TYPE test_slave_up gauge\n" +
		"test_slave_up{bond=\"bond0\",slave=\"eth0\"} 1\ntest_slave_up{bond=\"bond0\",slave=\"eth\uFFFD\"} 2\n"
	if text != want {
		t.Fatalf("got\n%s\nwant\n%s", text, want)
	}
}

// An empty scrape writes nothing, which parses as no families; so does a
// Scrape after Reset.
func TestEmptyScrape(t *testing.T) {
	if text := write(t, nil); len(text) != 0 || len(parse(t, text)) != 0 {
		t.Fatalf("empty scrape wrote %q", text)
	}
	var s Scrape
	s.Add(descOne, 1)
	s.Reset()
	var b bytes.Buffer
	if _, err := s.WriteTo(&b); err != nil || b.Len() != 0 {
		t.Fatalf("after Reset: %q, %v", b.String(), err)
	}
	s.Add(descOne, 2)
	b.Reset()
	if _, err := s.WriteTo(&b); err != nil || b.String() != "# HELP test_bonds Bonds.\n# TYPE test_bonds gauge\ntest_bonds 2\n" {
		t.Fatalf("reused after Reset: %q, %v", b.String(), err)
	}
}

// The caller's label values are neither kept nor changed.
func TestAddCopiesLabels(t *testing.T) {
	labels := []string{"eth\xff", "bond0"}
	var s Scrape
	s.Add(descUp, 1, labels...)
	labels[1] = "changed"
	var b bytes.Buffer
	s.WriteTo(&b)
	if labels[0] != "eth\xff" || !strings.Contains(b.String(), `bond="bond0"`) {
		t.Fatalf("labels %q, text %s", labels, b.String())
	}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

// Mistakes in the code panic where they are made, not in a scrape's text.
func TestMistakesPanic(t *testing.T) {
	for _, name := range []string{"", "0starts_with_digit", "has-dash", "has space", "ünicode"} {
		mustPanic(t, "metric name "+name, func() { NewDesc(name, "", Gauge) })
	}
	for _, label := range []string{"", "__reserved", "has:colon", "1x", "é"} {
		mustPanic(t, "label name "+label, func() { NewDesc("test_x", "", Gauge, label) })
	}
	mustPanic(t, "label twice", func() { NewDesc("test_x", "", Gauge, "a", "b", "a") })
	mustPanic(t, "type", func() { NewDesc("test_x", "", Type(0)) })
	mustPanic(t, "too few values", func() { new(Scrape).Add(descUp, 1, "eth0") })
	mustPanic(t, "too many values", func() { new(Scrape).Add(descOne, 1, "x") })
	// and these are fine
	NewDesc("test:colon_name", "", Counter, "_under", "le", "a1")
}

// A warm Scrape (the Handler's come from a pool) writes a scrape without
// allocating per sample.
func TestScrapeAllocations(t *testing.T) {
	var s Scrape
	var b bytes.Buffer
	run := func() {
		s.Reset()
		for i := range 100 {
			s.Add(descUp, float64(i), "eth0", "bond0")
			s.Add(descInfo, 1, "bond\xff", "802.3ad", "stable") // repaired: one string each
			s.Add(descRx, 1e12+float64(i), "bond0")
		}
		b.Reset()
		s.WriteTo(&b)
	}
	run()
	// 100 repaired label values; the rest is the sort's bookkeeping.
	if n := testing.AllocsPerRun(10, run); n > 110 {
		t.Errorf("%v allocations for a scrape of 300 samples", n)
	}
}

// FuzzExposition: whatever the label values, HELP text and values, the
// text parses and reads back what was added (label values and help
// repaired to UTF-8, duplicates dropped), and is what the Go client's
// writer makes of the same families.
func FuzzExposition(f *testing.F) {
	f.Add("Bytes received.", "bond0", "eth0", 1.5, 42.0)
	f.Add("back\\slash \"quoted\"\nnext line", "a\"b\\c\nd", "\\n", math.Inf(1), math.Inf(-1))
	f.Add("", "", "", math.NaN(), math.Copysign(0, -1))
	f.Add(" \t leading blanks", "x\xc3", "x\xc3\xff", 1e300, 5e-324)
	f.Add("\xff\xfe", "same", "same", -1.0, 1.0)
	f.Add("tab\there\r\n\x00nul", "\x00", "\r\t", 0.1, 1e21)
	f.Fuzz(func(t *testing.T, help, a, b string, x, y float64) {
		gauge := NewDesc("fuzz_value", help, Gauge, "slave", "bond")
		counter := NewDesc("fuzz_events_total", help, Counter, "kind")
		plain := NewDesc("fuzz_plain", help, Gauge)
		if want := strings.TrimLeft(strings.ToValidUTF8(help, "\uFFFD"), " \t"); gauge.help != want || !utf8.ValidString(gauge.help) {
			t.Fatalf("help %q, want %q", gauge.help, want)
		}
		check(t, []added{
			{gauge, x, []string{a, b}},
			{gauge, y, []string{b, a}},
			{gauge, y, []string{a, b}}, // a duplicate of the first
			{counter, y, []string{a}},
			{counter, x, []string{b}}, // a duplicate when a and b repair alike
			{plain, x, nil},
			{plain, y, nil}, // a duplicate
			{gauge, x, []string{a + b, ""}},
		})
	})
}

// TestPromtoolReadsEscapes: promtool, which parses as the Prometheus
// server does, takes the text of the awkward values too.
func TestPromtoolReadsEscapes(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing (scripts/test-deps.sh installs Debian's prometheus package)")
		}
		t.Skip("promtool is missing: run scripts/test-deps.sh")
	}
	text := write(t, []added{
		{descInfo, 1, []string{"b\"o\\n\nd", "\x00\r\t", "bond\xff\xfe"}},
		{descRx, math.Inf(1), []string{"bond0"}},
		{descRx, math.NaN(), []string{"bond1"}},
		{descRx, math.Inf(-1), []string{"bond2"}},
		{descOdd, 5e-324, []string{"\u202e"}},
		{descOne, 1e300, nil},
	})
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	// Exit 3 is a lint finding (the test names are not all good names);
	// 1 is text it could not parse.
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 3 || strings.Contains(string(out), "error while linting") {
		t.Fatalf("promtool check metrics: %v\n%s\n%s", err, out, text)
	}
}
