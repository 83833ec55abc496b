package lab

import (
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want event
	}{
		{"bondtop-lab: init 6.1.0-57-amd64\r", event{Kind: evInit, Text: "6.1.0-57-amd64"}},
		{"bondtop-lab: exit 1", event{Kind: evExit, Text: "1"}},
		{"bondtop-lab: error finit_module bonding.ko: no such file", event{Kind: evError, Text: "finit_module bonding.ko: no such file"}},
		{"\x16=== RUN   TestLACP", event{Kind: evStart, Name: "TestLACP"}},
		{"\x16=== RUN   TestLACP/slaves=2", event{Kind: evOutput, Text: "=== RUN   TestLACP/slaves=2"}},
		{"\x16--- PASS: TestLACP (3.20s)", event{Kind: evEnd, Name: "TestLACP", Result: "PASS", Text: "--- PASS: TestLACP (3.20s)"}},
		{"\x16--- FAIL: TestLACP/slaves=4 (3.20s)", event{Kind: evOutput, Text: "--- FAIL: TestLACP/slaves=4 (3.20s)"}},
		{"\x16=== NAME  TestLACP", event{Kind: evOutput}},
		{"    lacp_test.go:10: --- PASS: not framing", event{Kind: evOutput, Text: "    lacp_test.go:10: --- PASS: not framing"}},
		{"[    1.2] kernel noise", event{Kind: evOutput, Text: "[    1.2] kernel noise"}},
	} {
		if got := parseLine(tc.line); got != tc.want {
			t.Errorf("parseLine(%q) = %+v, want %+v", tc.line, got, tc.want)
		}
	}
}

// failingLines retells the failed leaf subtests' lines, not a passing
// sibling's, and falls back to the tail when there are no subtests.
func TestFailingLines(t *testing.T) {
	said := []string{
		"=== RUN   TestFlowTable/layer3+4",
		"    flows_test.go:267: window 1, dut2: predicted tx share 0.600",
		"    flows_test.go:58: finding what-if (info)",
		"    --- FAIL: TestFlowTable/layer3+4 (7.68s)",
		"=== RUN   TestFlowTable/layer2",
		"    flows_test.go:87: flow table: 4 of 4 streams found",
		"    --- PASS: TestFlowTable/layer2 (5.62s)",
		"=== RUN   TestFlowTable/nested",
		"=== RUN   TestFlowTable/nested/inner",
		"    flows_test.go:99: inner broke",
		"        --- FAIL: TestFlowTable/nested/inner (0.10s)",
		"    --- FAIL: TestFlowTable/nested (0.20s)",
	}
	got := strings.Join(failingLines(said, 40), "\n")
	for _, want := range []string{"predicted tx share 0.600", "FAIL: TestFlowTable/layer3+4", "inner broke"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q missing from:\n%s", want, got)
		}
	}
	for _, not := range []string{"4 of 4 streams", "FAIL: TestFlowTable/nested (0.20s)"} {
		if strings.Contains(got, not) {
			t.Errorf("%q retold:\n%s", not, got)
		}
	}
	if got := failingLines(said[:2], 1); len(got) != 1 || got[0] != said[1] {
		t.Errorf("no failed subtest: %q, want the last line", got)
	}
	if got := failingLines(said[:4], 2); len(got) != 2 || got[1] != said[3] {
		t.Errorf("kept %q, want the last 2 lines of the block", got)
	}
}
