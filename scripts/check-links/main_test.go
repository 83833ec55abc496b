package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tree writes files (path: content) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestBrokenLinksAreReported(t *testing.T) {
	root := tree(t, map[string]string{
		"README.md": "# Top\n\nSee [the dashboard](docs/dashboard.md), [keys](docs/dashboard.md#keys),\n" +
			"[gone](docs/gone.md), [bad anchor](docs/dashboard.md#nope), [web](https://example.com/x.md),\n" +
			"[rules](contrib/rules.yml), [dir](contrib), [self](#top), [self bad](#bottom).\n" +
			"![shot](docs/missing.png)\n" +
			"[ref]: docs/also-gone.md\n",
		"docs/dashboard.md": "# The dashboard\n\n## Keys\n\nBack to [the README](../README.md#top) and [out](../../etc/passwd).\n" +
			"```sh\n[not a link](nowhere.md)\n```\nA `[code](span.md)` is text.\n",
		"contrib/rules.yml": "groups: []\n",
	})
	var out, errOut bytes.Buffer
	if code := run(root, &out, &errOut); code != 1 {
		t.Fatalf("exit code %d, want 1; stdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	want := []string{
		"README.md:4: docs/gone.md: no such file",
		"README.md:4: docs/dashboard.md#nope: no heading #nope in docs/dashboard.md",
		"README.md:5: #bottom: no heading #bottom in README.md",
		"README.md:6: docs/missing.png: no such file",
		"README.md:7: docs/also-gone.md: no such file",
		"docs/dashboard.md:5: ../../etc/passwd: leads out of the repository",
		"check-links: 6 broken relative link(s) in 2 page(s)",
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestGoodLinksPass(t *testing.T) {
	root := tree(t, map[string]string{
		"README.md":         "# bondtop\n\n[JSON](docs/json.md#the-flow-meter-per-bond), [changes](CHANGELOG.md#unreleased).\n",
		"CHANGELOG.md":      "# Changelog\n\n## [Unreleased]\n\n[Unreleased]: https://example.com/compare\n",
		"docs/json.md":      "# JSON\n\n## The flow meter, per bond\n\nSee [`--top`](../README.md#bondtop).\n",
		"docs/other.md":     "## Same\n## Same\n[second](#same-1)\n",
		"docs/notes/x.md":   "not checked: only docs/*.md\n[x](nowhere.md)\n",
		"docs/drill.md":     "# Drill\n",
		"docs/extra.md":     "[drill](drill.md) [up](../README.md)\n",
		"docs/empty-ok.md":  "",
		"docs/fenced.md":    "~~~\n[x](gone.md)\n~~~\n",
		"docs/code-span.md": "``[x](gone.md)`` and `a`\n",
	})
	var out, errOut bytes.Buffer
	if code := run(root, &out, &errOut); code != 0 {
		t.Fatalf("exit code %d, want 0; stdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
}

func TestSlug(t *testing.T) {
	for title, want := range map[string]string{
		"Why is traffic not spread? Findings, flows and `bondtop hash`": "why-is-traffic-not-spread-findings-flows-and-bondtop-hash",
		"The flow meter, per bond":                                      "the-flow-meter-per-bond",
		"Load tests: `bondtop load` and `bondtop serve`":                "load-tests-bondtop-load-and-bondtop-serve",
		"Keys, modes and exit codes":                                    "keys-modes-and-exit-codes",
		"[Unreleased]":                                                  "unreleased",
		"[0.1.0] - 2026-12-06":                                          "010---2026-12-06",
	} {
		got := slug(linkText.ReplaceAllString(title, "$1"))
		if got != want {
			t.Errorf("slug(%q) = %q, want %q", title, got, want)
		}
	}
}
