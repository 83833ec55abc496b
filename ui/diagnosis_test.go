package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/loadrun"
	"github.com/gdamore/tcell/v2"
)

// demoHost samples the demo's simulation on the fake clock for secs
// seconds, with the analyzer the CLI runs: findings, flow table and all.
func demoHost(t *testing.T, secs int) (*host, *demo.Source) {
	t.Helper()
	return demoHostWith(t, secs, true)
}

// socketsOnly is the demo without its flow meter: the host's sockets
// are all there is, as on a live host without root.
type socketsOnly struct {
	collector.Source
	collector.FlowReader
}

// demoHostWith is demoHost, with the demo's simulated flow meter or
// without (metered false: the socket view).
func demoHostWith(t *testing.T, secs int, metered bool) (*host, *demo.Source) {
	t.Helper()
	h := newHost(t)
	clock := func() time.Time { return h.now }
	d := demo.New(clock)
	var src collector.Source = d
	if !metered {
		src = socketsOnly{d, d}
	}
	h.sampler = collector.NewSampler(src, collector.Options{
		Interval: time.Second, Clock: clock, Analyze: diagnose.NewWindow(0).Fill,
		MeterEvery: collector.DashboardMeterEvery, // as cmd/bondtop's dashboard
	})
	h.sample(0)
	for range secs {
		h.sample(time.Second)
	}
	return h, d
}

// demoSim shows the demo's bond0 (1 in the chooser the demo's two bonds
// open with).
func demoSim(t *testing.T, h *host, width, height int, mono bool) *sim {
	t.Helper()
	s := newSim(t, h, width, height, mono)
	s.press("1")
	return s
}

// goldenPanel compares only the open overlay's rectangle with the golden
// file: the panels behind it (graphs, tables) have golden screens of their
// own, and change for their own reasons.
func (s *sim) goldenPanel(name string) {
	s.t.Helper()
	x, y, w, h := s.d.overlay.GetRect()
	rows := strings.Split(s.text(), "\n")
	var b strings.Builder
	for row := y; row < y+h && row < len(rows); row++ {
		r := []rune(rows[row] + strings.Repeat(" ", x+w))
		b.WriteString(strings.TrimRight(string(r[x:x+w]), " "))
		b.WriteByte('\n')
	}
	got := b.String()
	path := filepath.Join("testdata", "screens", name+".txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			s.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatalf("%v (run go test ./ui -update to create it)", err)
	}
	if got != string(want) {
		s.t.Errorf("panel %s differs from %s (go test ./ui -update rewrites it)\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

// The diagnosis panel on the demo 40 s in: ens2f0 has lost link, and the
// layer2 policy sends nearly everything to the gateway by one slave.
func TestGoldenDiagnosis(t *testing.T) {
	h, _ := demoHost(t, 40)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		s := demoSim(t, h, size[0], size[1], false)
		s.press("d")
		s.goldenPanel(fmt.Sprintf("demo-diagnosis-%dx%d", size[0], size[1]))
	}
}

func TestDiagnosisSelectAndScroll(t *testing.T) {
	h, _ := demoHost(t, 40)
	s := demoSim(t, h, 100, 40, false)
	s.press("d")
	b := s.d.model.Selected()
	if len(b.Findings) < 2 {
		t.Fatalf("want several findings, have %d", len(b.Findings))
	}
	mustContain(t, s.text(), "why, and what to do")
	mustContain(t, s.text(), "what-if")
	mustContain(t, s.text(), "layer3+4")
	s.key(tcell.KeyDown, 0)
	if s.d.diag.cursor != 1 {
		t.Fatalf("↓: cursor %d, want 1", s.d.diag.cursor)
	}
	mustContain(t, s.text(), "("+b.Findings[1].ID)
	for range 20 {
		s.key(tcell.KeyDown, 0)
	}
	if s.d.diag.cursor != len(b.Findings)-1 {
		t.Fatalf("cursor %d past the last finding %d", s.d.diag.cursor, len(b.Findings)-1)
	}
	s.key(tcell.KeyPgDn, 0)
	s.key(tcell.KeyEscape, 0)
	mustNotContain(t, s.text(), "why, and what to do")
	// Severity shows as a word for NO_COLOR, and by colour otherwise.
	s = demoSim(t, h, 100, 40, true)
	s.press("d")
	mustContain(t, s.text(), "WARN")
}

// Every panel of this change draws at every size without a panic.
func TestNewPanelsEverySize(t *testing.T) {
	h, src := demoHost(t, 40)
	s := demoSim(t, h, 80, 24, false)
	s.d.loadp.runner = loadrun.Demo{Source: src}
	for _, key := range []string{"d", "f", "l"} {
		s.press(key)
		for _, size := range [][2]int{{0, 0}, {1, 1}, {2, 2}, {11, 3}, {12, 4}, {40, 12}, {80, 24}, {160, 48}} {
			s.screen.SetSize(size[0], size[1])
			s.draw()
		}
		s.key(tcell.KeyEscape, 0)
	}
}

// The diagnosis panel on a real kernel's tree whose /etc says MTU 9000
// for a bond running at 1500: the configuration section names netplan,
// the drifted setting with both values, and the file and line.
func TestDiagnosisDrift(t *testing.T) {
	h := newHost(t)
	h.Dir = filepath.Join("..", "testdata", "lab", "Drift_netplan")
	src, err := rootdir.New(h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	h.sampler = collector.NewSampler(src, collector.Options{Clock: func() time.Time { return h.now }, Analyze: diagnose.NewWindow(0).Fill})
	h.sample(0)
	h.sample(time.Second)
	s := newSim(t, h, 120, 40, true)
	s.press("d")
	text := s.text()
	for _, want := range []string{"configuration  netplan: /etc/netplan/01-bond.yaml", "mtu", "1500", "9000", "/etc/netplan/01-bond.yaml:11", "differs from its netplan configuration"} {
		mustContain(t, text, want)
	}
}
