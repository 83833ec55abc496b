package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// clockFields matches the wall-clock time and measured interval of a
// snapshot, which differ between runs.
var clockFields = regexp.MustCompile(`"(time|interval_s)": ("[^"]*"|[0-9.e-]+)`)

// TestGoldenOnceJSON runs `bondtop --root TREE --once --json` on a tree per
// captured /proc/net/bonding file (every real-world capture and the
// synthetic layouts) and compares the document with a reviewed golden
// file. Rates are null: the trees have no counters.
func TestGoldenOnceJSON(t *testing.T) {
	files, err := filepath.Glob("../../bonding/testdata/proc/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			proc, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			p := filepath.Join(dir, "proc/net/bonding/bond0")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, proc, 0o644); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := runBinary(t, "--root", dir, "--once", "--json", "--interval", "100ms")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !json.Valid([]byte(out)) {
				t.Fatalf("not JSON: %s", out)
			}
			got := clockFields.ReplaceAllString(out, `"$1": "X"`)
			golden := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/bondtop -run Golden -update, then review the files)", err)
			}
			if !bytes.Equal(want, []byte(got)) {
				t.Errorf("output differs from %s; got:\n%s", golden, got)
			}
		})
	}
}
