package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// Bad drill arguments are usage errors, named, and change nothing; -h
// prints the flags.
func TestDrillArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"drill"}, "give one bond"},
		{[]string{"drill", "bond0"}, "no peer"},
		{[]string{"drill", "bond0", "--peer", "h", "--how", "unplug"}, `--how "unplug"`},
		{[]string{"drill", "bond0", "--peer", "h", "--direction", "up"}, `--direction "up"`},
		{[]string{"drill", "bond0", "--peer", "h", "--hold", "10ms"}, "--hold 10ms"},
		{[]string{"drill", "bond0", "--peer", "h", "--hold", "soon"}, "invalid value"},
		{[]string{"drill", "../x", "--restore"}, "not an interface name"},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errb.String(), exitUsage, c.want)
		}
	}
	var out bytes.Buffer
	if code := run([]string{"drill", "-h"}, &out, &out); code != exitOK || !strings.Contains(out.String(), "--restore") {
		t.Errorf("drill -h: %d %s", code, out.String())
	}
}

// Without root the drill refuses with exit 2 before it looks at anything.
func TestDrillNeedsRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: the lab's TestDrillSafety runs the binary as nobody")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"drill", "bond0", "--peer", "127.0.0.1", "--yes"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "needs root") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
