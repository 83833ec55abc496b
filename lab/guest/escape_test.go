//go:build linux

package guest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/model"
)

// TestEscapeNamesLive: the kernel accepts interface names with terminal
// escapes in them. An active-backup bond named with a title-setting
// sequence, over slaves named with a colour sequence and an 8-bit CSI, is
// printed by the real binary in every text mode with those characters made
// visible (\x1b, \x07, \u009b) and no control byte on stdout or stderr;
// --json keeps the names exactly as the kernel has them.
func TestEscapeNamesLive(t *testing.T) {
	if _, err := os.Stat(bondtopBin); err != nil {
		t.Fatalf("bondtop is not in the initramfs: %v", err)
	}
	if b, _ := os.ReadFile("/sys/class/net/bonding_masters"); len(strings.TrimSpace(string(b))) > 0 {
		t.Fatalf("bonds left over from an earlier scenario: %s", b)
	}
	const bond = "bond\x1b]0;pw\x07"
	slaves := []string{"dut\x1b[31m0", "dut\u009b2J1"}
	visible := []string{`bond\x1b]0;pw\x07`, `dut\x1b[31m0`, `dut\u009b2J1`}
	root, peer := Root(t), NewNS(t, "peer")
	for i, s := range slaves {
		root.Veth(t, s, peer, "far"+string(rune('0'+i)))
	}
	root.Bond(t, bond, BondSpec{Mode: "active-backup"}, slaves...)

	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bondtopBin, args...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("bondtop %s: %v\n%s", strings.Join(args, " "), err, e.String())
			}
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("bondtop %s did not finish", strings.Join(args, " "))
		}
		return o.String(), e.String()
	}

	out, _ := run("--once", "--json", "--interval", "200ms")
	var snap model.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	b := BondIn(t, &snap, bond)
	for _, s := range slaves {
		SlaveIn(t, b, s)
	}

	for _, args := range [][]string{
		{"--once", "--interval", "200ms"},
		{"--count", "2", "--interval", "200ms"},
		{"list"},
	} {
		out, errOut := run(args...)
		for i, c := range []byte(out + errOut) {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c == 0xc2 && i+1 < len(out+errOut) && (out + errOut)[i+1] <= 0x9f) {
				t.Errorf("bondtop %s printed byte %#x: %q", strings.Join(args, " "), c, (out + errOut)[max(0, i-20):min(len(out+errOut), i+20)])
				break
			}
		}
		for _, v := range visible {
			if !strings.Contains(out, v) {
				t.Errorf("bondtop %s does not show %s:\n%s", strings.Join(args, " "), v, out)
			}
		}
		t.Logf("bondtop %s:\n%s", strings.Join(args, " "), out)
	}
}
