package fleet

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Matcher
	}{
		{``, nil},
		{`{}`, nil},
		{`{job="bondtop",dc="fra1"}`, []Matcher{{"job", "=", "bondtop"}, {"dc", "=", "fra1"}}},
		{` { job = "bondtop" , } `, []Matcher{{"job", "=", "bondtop"}}},
		{`job!="x",instance=~'host[0-9]+:9100'`, []Matcher{{"job", "!=", "x"}, {"instance", "=~", "host[0-9]+:9100"}}},
		{"{dc!~`fra.*`}", []Matcher{{"dc", "!~", "fra.*"}}},
		{`{a="say \"hi\"\n"}`, []Matcher{{"a", "=", "say \"hi\"\n"}}},
		{`{a='it\'s "x"'}`, []Matcher{{"a", "=", `it's "x"`}}},
	} {
		got, err := ParseSelector(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSelector(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseSelectorRejects(t *testing.T) {
	for _, tc := range []struct{ in, why string }{
		{`{job="bondtop"`, "closing }"},
		{`up{job="x"}`, "only label matchers"},
		{`{job}`, "expected ="},
		{`{job=bondtop}`, "quoted string"},
		{`{job="bondtop}`, "closing \""},
		{`{job=~"("}`, "regular expression"},
		{`{__name__="up"}`, "__name__"},
		{`{job="a" dc="b"}`, "expected , or }"},
		{`{9x="a"}`, "label name"},
		{`{a="\q"}`, "bad escape"},
	} {
		_, err := ParseSelector(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ParseSelector(%q): %v; want an error saying %q", tc.in, err, tc.why)
		}
	}
}

// FuzzParseSelector: whatever the input, a selector that parses renders
// to PromQL that parses back to the same matchers, so nothing of the
// user's text escapes its quotes.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{`{job="bondtop",dc="fra1"}`, `{a=~'x.*'}`, "{a!=`b`}", `{a="\u00e9\"}"}`, `a="b",c!~"d"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseSelector(s)
		if err != nil {
			return
		}
		rendered := selName("", m)
		again, err := ParseSelector(rendered)
		if err != nil {
			t.Fatalf("%q rendered as %q, which does not parse: %v", s, rendered, err)
		}
		if len(m) != len(again) || (len(m) > 0 && !reflect.DeepEqual(m, again)) {
			t.Fatalf("%q: %v rendered as %q reads back as %v", s, m, rendered, again)
		}
	})
}
