package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordReplayJSON: what --count --json printed while recording is what
// --replay --count --json prints, line for line; a truncated copy prints
// the snapshots it holds and says it is cut short.
func TestRecordReplayJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.rec")
	live, stderr, code := runBinary(t, "--demo", "--count", "5", "--json", "--interval", "100ms", "--record", path)
	if code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	// The recording also holds the priming sample taken before the first
	// printed one, which the live run did not print: the replay skips it.
	replayed, stderr, code := runBinary(t, "--replay", path, "--count", "5", "--json")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	liveLines := strings.Split(strings.TrimSpace(live), "\n")
	replayLines := strings.Split(strings.TrimSpace(replayed), "\n")
	if len(liveLines) != 5 || len(replayLines) != 5 {
		t.Fatalf("%d live lines, %d replayed", len(liveLines), len(replayLines))
	}
	for i := range liveLines {
		if liveLines[i] != replayLines[i] {
			t.Fatalf("line %d differs:\nlive:   %s\nreplay: %s", i, liveLines[i], replayLines[i])
		}
	}
	// --json alone prints the whole recording, as the live run printed it.
	all, stderr, code := runBinary(t, "--replay", path, "--json")
	if code != 0 || strings.TrimSpace(all) != strings.TrimSpace(live) {
		t.Fatalf("--replay --json: exit %d (%s), want the 5 printed lines, got:\n%s", code, stderr, all)
	}
	// The case: three lines, the same three.
	three := filepath.Join(t.TempDir(), "three.rec")
	live3, stderr, code := runBinary(t, "--demo", "--count", "3", "--json", "--interval", "100ms", "--record", three)
	if code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	if replay3, stderr, code := runBinary(t, "--replay", three, "--count", "3", "--json"); code != 0 || replay3 != live3 {
		t.Fatalf("replay --count 3: exit %d (%s)\nlive:\n%sreplay:\n%s", code, stderr, live3, replay3)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.rec")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	partial, stderr, code := runBinary(t, "--replay", cut, "--count", "5", "--json")
	got := strings.Split(strings.TrimSpace(partial), "\n")
	if code != 1 || !strings.Contains(stderr, "cut short") || len(got) == 0 || len(got) >= 5 || got[0] != replayLines[0] {
		t.Fatalf("truncated: exit %d, %d lines, stderr %q", code, len(got), stderr)
	}

	_, stderr, code = runBinary(t, "--replay", filepath.Join(t.TempDir(), "none.rec"))
	if code != 1 || !strings.Contains(stderr, "no such file") {
		t.Fatalf("missing file: exit %d, %q", code, stderr)
	}
}
