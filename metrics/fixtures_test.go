package metrics

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/internal/testtree"
	"github.com/prometheus/common/model"
)

// Helpers the metrics tests share: real scrapes of fixture trees, and
// promtool as a judge. The shipped rules and dashboard are tested in
// contrib/.

// fixtureRoot returns a --root tree for the fixture called name: a lab
// tree as it is, or a field capture placed as /proc/net/bonding/bond0.
func fixtureRoot(t *testing.T, name string) string {
	t.Helper()
	if dir := filepath.Join("../testdata/lab", name); isDir(dir) {
		return dir
	}
	capture, err := os.ReadFile(filepath.Join("../bonding/testdata/proc", name+".txt"))
	if err != nil {
		t.Fatalf("fixture %s: neither a lab tree nor a field capture: %v", name, err)
	}
	tree := testtree.New(t)
	tree.Write("proc/net/bonding/bond0", string(capture))
	return tree.Dir
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// scrapeFixture samples the fixture as `bondtop --root` does and returns
// its scrape as series (name{labels} without instance and job) to values.
func scrapeFixture(t *testing.T, name string) map[string]float64 {
	t.Helper()
	now := time.Unix(1_700_000_100, 0) // a whole five minutes: the demo script's start
	clock := func() time.Time { return now }
	// Two samples: rates need two. The demo host is the one fixture
	// whose counters move, and the only one that shows an imbalance:
	// it is sampled through its first 20 s, when the imbalance shows.
	var src collector.Source
	samples := 2
	if name == "demo" {
		src, samples = demo.New(clock), 21
	} else {
		rs, err := rootdir.New(fixtureRoot(t, name))
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		src = rs
	}
	s := collector.NewSampler(src, collector.Options{Clock: clock, Analyze: diagnose.NewWindow(0).Fill})
	e := New(Version("test"))
	for range samples {
		snap, err := s.Sample()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e.Update(snap)
		now = now.Add(time.Second)
	}
	fams := scrape(t, e)
	out := make(map[string]float64)
	for fname, f := range fams {
		for _, m := range f.Metric {
			labels := model.LabelSet{model.MetricNameLabel: model.LabelValue(fname)}
			for _, lp := range m.Label {
				labels[model.LabelName(lp.GetName())] = model.LabelValue(lp.GetValue())
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.Counter.GetValue()
			}
			out[seriesKey(labels)] = v
		}
	}
	return out
}

// seriesKey is a canonical name{a="x",b="y"} for a label set.
func seriesKey(ls model.LabelSet) string {
	return ls.String()
}
