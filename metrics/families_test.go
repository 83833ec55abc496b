package metrics

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/internal/testbin"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// renamed are the families whose names the unit fixes changed (promtool's
// lint: base units), old name to new; the README's upgrade note lists them.
var renamed = map[string]string{
	"bondtop_slave_module_tx_bias_milliamperes": "bondtop_slave_module_tx_bias_amperes",
	"bondtop_slave_module_rx_power_mw":          "bondtop_slave_module_rx_power_watts",
}

// TestFamiliesKept: every bondtop_* family the exporter served before it
// moved to the Prometheus Go client (testdata/families-before.txt: the
// TYPE lines of a scrape of the demo and of every lab tree, taken with the
// old exposition) is still served, with its type, under its name or the
// unit fix's; and promtool's lint finds nothing in any of those scrapes.
func TestFamiliesKept(t *testing.T) {
	before := map[string]string{}
	f, err := os.Open("testdata/families-before.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, typ, ok := strings.Cut(sc.Text(), " ")
		if ok {
			before[name] = typ
		}
	}
	if len(before) < 70 {
		t.Fatalf("%d families in testdata/families-before.txt: not the list", len(before))
	}
	scrapes := map[string][]byte{"demo": rawScrape(t, demoExporter(t))}
	trees, err := filepath.Glob("../testdata/lab/*/proc")
	if err != nil || len(trees) == 0 {
		t.Fatalf("no lab trees: %v", err)
	}
	for _, p := range trees {
		name := filepath.Base(filepath.Dir(p))
		e := New()
		e.Update(fixtureSnapshot(t, name))
		scrapes[name] = rawScrape(t, e)
	}
	now := map[string]string{}
	promtool, _ := exec.LookPath("promtool")
	for name, text := range scrapes {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for n, fam := range fams {
			now[n] = strings.ToLower(dto.MetricType_name[int32(fam.GetType())])
		}
		if promtool == "" {
			continue
		}
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("promtool check metrics on %s: %v\n%s", name, err, out)
		}
	}
	if promtool == "" {
		testbin.NeedTool(t, "promtool")
	}
	for name, typ := range before {
		if n, ok := renamed[name]; ok {
			name = n
		}
		if got, ok := now[name]; !ok {
			t.Errorf("%s (%s) is no longer served", name, typ)
		} else if got != typ {
			t.Errorf("%s is a %s, was a %s", name, got, typ)
		}
	}
	t.Logf("%d families of before kept with their types, over %d scrapes (the demo and %d lab trees), promtool clean", len(before), len(scrapes), len(trees))
}
