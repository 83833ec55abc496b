package lab

import "testing"

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
