package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The load panel as a user gets it under --demo: l opens the form with
// the demo's peer filled in, Enter starts the defaults (4 TCP streams,
// 10 s, spread), the stream rows appear under the graphs with their
// slaves, and q still quits cleanly while the test runs.
func TestLoadPanelDemoInTmux(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	exitFile := filepath.Join(t.TempDir(), "exit")
	p := newPane(t, 80, 24, fmt.Sprintf("%s --demo bond0; echo $? > %s; echo bondtop-exited; sleep 60", bin, exitFile))
	p.waitText("ens1f0", 10*time.Second)
	p.keys("l")
	p.waitText("New load test over bond0", 5*time.Second)
	p.keys("Enter")
	screen := p.waitFor("stream rows", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "via bond0") && strings.Contains(s, "#1 ") && strings.Contains(s, "#3 ") && strings.Contains(s, " tx ")
	})
	// layer2 hashes no port: the panel says why the streams share a slave.
	if !strings.Contains(screen, "cannot spread") {
		t.Errorf("no word on the layer2 policy:\n%s", screen)
	}
	// The graphs stay in sight above the streams.
	if !strings.Contains(screen, "TX bit/s") {
		t.Errorf("the graphs are hidden by the load panel:\n%s", screen)
	}
	p.keys("q")
	p.waitText("bondtop-exited", 5*time.Second)
	code, err := os.ReadFile(exitFile)
	if err != nil || strings.TrimSpace(string(code)) != "0" {
		t.Errorf("q: exit status %q (%v), want 0", code, err)
	}
}
