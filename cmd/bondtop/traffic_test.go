package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/record"
)

// TestGoldenDemoTraffic: the "traffic" object of the demo's bond0 after
// five seconds on a fake clock (so every number is the same run to run),
// cut to the top 8 flows as --top 8 does, against a reviewed golden file.
func TestGoldenDemoTraffic(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := collector.NewSampler(demo.New(clock), collector.Options{Clock: clock, Analyze: diagnose.NewWindow(0).Fill})
	var snap *model.Snapshot
	for range 6 {
		var err error
		if snap, err = s.Sample(); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	cut := limitFlows(snap, 8)
	if len(snap.Bond("bond0").Measured.Flows) <= 8 || cut == snap {
		t.Fatal("the demo should have more than 8 flows, and the cut copy the snapshot")
	}
	if n := len(cut.Bond("bond0").Measured.Flows); n != 8 {
		t.Fatalf("--top 8 kept %d flows", n)
	}
	got, err := json.MarshalIndent(cut.Bond("bond0").Measured, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "golden", "demo-traffic.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/bondtop -run Golden -update, then review the file)", err)
	}
	if string(want) != string(got) {
		t.Errorf("traffic differs from %s; got:\n%s", golden, got)
	}
}

// TestDemoTrafficJSON runs the real binary: --demo --once --json --top 5
// gives each bond a traffic object from the simulated meter, five flows
// sorted by rate, and --count gives it on every line.
func TestDemoTrafficJSON(t *testing.T) {
	out, stderr, code := runBinary(t, "--demo", "--once", "--json", "--top", "5", "--interval", "200ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Bonds []struct {
			Name    string `json:"name"`
			Kind    string `json:"kind"`
			Traffic *struct {
				Source     string `json:"source"`
				SampleRate int    `json:"sample_rate"`
				Flows      []struct {
					Slave     string   `json:"slave"`
					Direction string   `json:"direction"`
					Bps       *float64 `json:"bps"`
					Local     bool     `json:"local"`
				} `json:"flows"`
				Agreement struct {
					Flows int `json:"flows"`
					Agree int `json:"agree"`
				} `json:"agreement"`
			} `json:"traffic"`
		} `json:"bonds"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, b := range doc.Bonds {
		if b.Kind == "ovs" {
			continue // the demo simulates no flows on its OVS bond
		}
		tr := b.Traffic
		if tr == nil || tr.Source != "ebpf" || tr.SampleRate != 1 || len(tr.Flows) != 5 {
			t.Fatalf("%s traffic: %+v", b.Name, tr)
		}
		for i, f := range tr.Flows {
			if f.Bps == nil || i > 0 && *f.Bps > *tr.Flows[i-1].Bps {
				t.Fatalf("%s flows not sorted by bps: %+v", b.Name, tr.Flows)
			}
		}
		if tr.Agreement.Flows == 0 || tr.Agreement.Agree != tr.Agreement.Flows {
			t.Fatalf("%s agreement %+v", b.Name, tr.Agreement)
		}
	}
	out, stderr, code = runBinary(t, "--demo", "--count", "2", "--json", "--top", "0", "--interval", "200ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"traffic":{"source":"ebpf","sample_rate":1,"flows":[],`) {
		t.Fatalf("--count 2 --top 0: %d lines, %.300s", len(lines), lines[len(lines)-1])
	}
	if _, stderr, code := runBinary(t, "--demo", "--once", "--top", "-1"); code != exitUsage || !strings.Contains(stderr, "--top -1") {
		t.Fatalf("--top -1: exit %d, %s", code, stderr)
	}
}

// TestFlowsViewDemoInTmux: under --demo, f opens the flows view with the
// simulated meter's flows; t keeps the transmitted ones, among them the
// VMs' forwarded flows (no socket of this host), each with its observed
// and predicted slave.
func TestFlowsViewDemoInTmux(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	p := newPane(t, 160, 48, fmt.Sprintf("%s --demo bond0; sleep 60", bin))
	p.waitText("meter ebpf", 10*time.Second)
	p.keys("f")
	p.waitText("hash check: ", 5*time.Second)
	p.keys("t")
	screen := p.waitFor("forwarded tx flows", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "tx (t)") && strings.Contains(s, "fwd") && strings.Contains(s, "10.20.1.3")
	})
	if strings.Contains(screen, " rx  tcp") {
		t.Errorf("the tx filter shows rx flows:\n%s", screen)
	}
	if !strings.Contains(screen, "local") {
		t.Errorf("no local socket's flow among the tx flows:\n%s", screen)
	}
	p.keys("Escape", "q")
}

// TestStartMeterWithout: a build without a meter, and a meter that
// cannot open, leave the socket view and say why; the flags reach Open.
func TestStartMeterWithout(t *testing.T) {
	saved := openMeter
	t.Cleanup(func() { openMeter = saved })
	openMeter = nil
	if m, why := startMeter(&options{}); m != nil || !strings.Contains(why, "no flow meter") {
		t.Fatalf("no meter in the build: %v, %q", m, why)
	}
	var got flowmeter.Options
	openMeter = func(o flowmeter.Options) (flowmeter.Meter, error) {
		got = o
		return nil, fmt.Errorf("load program: %w", os.ErrPermission)
	}
	m, why := startMeter(&options{flowMapSize: 4096, noEBPF: true})
	if m != nil || !strings.Contains(why, "needs root") || !strings.Contains(why, "only this host's own sockets") {
		t.Fatalf("refused: %v, %q", m, why)
	}
	if got.MaxFlows != 4096 || !got.NoEBPF {
		t.Fatalf("Open got %+v, want MaxFlows 4096 and NoEBPF", got)
	}
}

// TestRecordKeepsTopFlows: --record writes each bond's busiest --top
// flows, and a replay reads them back into the snapshot.
func TestRecordKeepsTopFlows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.rec")
	if _, stderr, code := runBinary(t, "--demo", "--count", "2", "--interval", "200ms", "--top", "3", "--record", path); code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	rec, err := record.Read(path)
	if err != nil || len(rec.Entries) < 2 {
		t.Fatalf("read: %v", err)
	}
	m := rec.Entries[len(rec.Entries)-1].Snapshot.Bond("bond0").Measured
	if m == nil || m.Source != "ebpf" || len(m.Flows) != 3 || !m.HaveRates() || m.Flows[0].Bps < m.Flows[2].Bps {
		t.Fatalf("replayed traffic: %+v", m)
	}
}
