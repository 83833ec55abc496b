package lab

import (
	"regexp"
	"strings"
)

// The guest's report port carries two kinds of lines: the init program's
// own, which start with markerPrefix, and the output of the guest test
// binary run with -test.v=test2json, whose framing lines ("=== RUN",
// "--- PASS: ...") start with a ^V byte so they cannot be confused with
// what a test prints.
const (
	markerPrefix = "bondtop-lab: "
	framing      = "\x16"
)

// eventKind says what one line of the report port means.
type eventKind int

const (
	evOutput  eventKind = iota // a line of output (of the current test, if any)
	evInit                     // init is up: Text is the kernel release
	evStart                    // a top-level guest test started: Name
	evEnd                      // a top-level guest test ended: Name, Result
	evExit                     // the test binary exited: Text is its status
	evError                    // init could not run the tests: Text says why
	evFixture                  // a line of the base64 fixture archive
)

// event is one parsed line of the report port.
type event struct {
	Kind   eventKind
	Name   string // guest test name, for evStart and evEnd
	Result string // PASS, FAIL or SKIP, for evEnd
	Text   string
}

var endLine = regexp.MustCompile(`^--- (PASS|FAIL|SKIP): (\S+) \(`)

// parseLine turns one line of the report port into an event. Only
// top-level tests get start and end events: a subtest's framing is plain
// output of its parent, which keeps the host's view one level deep.
func parseLine(line string) event {
	line = strings.TrimRight(line, "\r")
	if rest, ok := strings.CutPrefix(line, markerPrefix); ok {
		verb, arg, _ := strings.Cut(rest, " ")
		switch verb {
		case "init":
			return event{Kind: evInit, Text: arg}
		case "exit":
			return event{Kind: evExit, Text: arg}
		case "error":
			return event{Kind: evError, Text: arg}
		case "fixture":
			return event{Kind: evFixture, Text: arg}
		}
		return event{Kind: evOutput, Text: line}
	}
	rest, ok := strings.CutPrefix(line, framing)
	if !ok {
		return event{Kind: evOutput, Text: line}
	}
	if name, ok := strings.CutPrefix(rest, "=== RUN   "); ok && !strings.Contains(name, "/") {
		return event{Kind: evStart, Name: name}
	}
	if m := endLine.FindStringSubmatch(rest); m != nil && !strings.Contains(m[2], "/") {
		return event{Kind: evEnd, Name: m[2], Result: m[1], Text: rest}
	}
	// "=== NAME" lines only say whose output follows; everything else
	// (subtest framing, the final PASS/FAIL) is output.
	if strings.HasPrefix(rest, "=== NAME") {
		return event{Kind: evOutput}
	}
	return event{Kind: evOutput, Text: rest}
}

// measureLine finds the figures guest tests report with Measure
// ("measure: lacp_negotiation[slaves=2] = 3.1 s").
var measureLine = regexp.MustCompile(`measure: (.+)$`)

// failingLines picks from a guest test's output (its lines in order) what
// says why it failed: the lines of each failed subtest that has no failed
// subtest of its own, the last keep of each; without subtests, the last
// keep lines. A CI log that keeps only a few lines before the host's
// verdict then shows the errors, not a passing sibling's chatter.
func failingLines(said []string, keep int) []string {
	runAt := map[string]int{}
	var out []string
	lastStart := -1 // where the last block taken began
	for i, line := range said {
		text := strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(text, "=== RUN   "); ok {
			runAt[name] = i
			continue
		}
		m := endLine.FindStringSubmatch(text)
		if m == nil || m[1] != "FAIL" {
			continue
		}
		start, ok := runAt[m[2]]
		if !ok || start < lastStart {
			continue // a parent of a block already taken
		}
		block := said[start : i+1]
		out = append(out, block[max(len(block)-keep, 0):]...)
		lastStart = start
	}
	if len(out) == 0 {
		out = said[max(len(said)-keep, 0):]
	}
	return out
}
