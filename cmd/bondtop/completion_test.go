package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// completeBash sources the real binary's bash script in a real bash and
// asks it to complete words, as Tab does; it returns COMPREPLY.
func completeBash(t *testing.T, script string, words ...string) []string {
	t.Helper()
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, "'"+w+"'")
	}
	prog := script + "\nCOMP_WORDS=(bondtop " + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
		strconv.Itoa(len(words)) + "\n_bondtop\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

func TestCompletionBash(t *testing.T) {
	script, stderr, code := runBinary(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		words []string
		want  []string
	}{
		{[]string{"se"}, []string{"serve"}},
		{[]string{"--int"}, []string{"--interval"}},
		{[]string{"--interval", "10"}, []string{"100ms", "10s"}},
		{[]string{"load", "--sp"}, []string{"--spread"}},
		{[]string{"serve", "--max-"}, []string{"--max-rate", "--max-duration"}},
		{[]string{"hash", "--src"}, []string{"--src", "--src-mac"}},
		{[]string{"completion", "f"}, []string{"fish"}},
	} {
		got := completeBash(t, script, c.words...)
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("bondtop %s<Tab>: %q, want %q", strings.Join(c.words, " "), got, c.want)
		}
	}
}

// Every shell gets a script naming the subcommands and flags; a bad
// shell is a usage error.
func TestCompletionShells(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, stderr, code := runBinary(t, "completion", sh)
		if code != 0 || !strings.Contains(out, "serve") || !strings.Contains(out, "interval") || !strings.Contains(out, "bonding_masters") {
			t.Errorf("%s: exit %d (%s):\n%s", sh, code, stderr, out)
		}
	}
	if _, stderr, code := runBinary(t, "completion", "tcsh"); code != exitUsage || !strings.Contains(stderr, "bash, zsh or fish") {
		t.Errorf("tcsh: exit %d, %q", code, stderr)
	}
}
