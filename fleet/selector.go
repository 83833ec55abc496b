package fleet

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/common/model"
)

// Matcher is one label matcher of a --prometheus-match selector.
type Matcher struct {
	Name  string
	Op    string // "=", "!=", "=~" or "!~"
	Value string
}

// String renders the matcher as PromQL, the value quoted anew so that
// nothing of the user's text can leave the string.
func (m Matcher) String() string {
	return m.Name + m.Op + strconv.Quote(m.Value)
}

// ParseSelector reads a label selector as PromQL writes one:
// {job="bondtop",dc=~"fra.*"}. The braces may be left out; a metric name
// may not be given (the selector scopes every bondtop metric and up).
// Values are quoted with "..." (Go escapes), '...' or `...`.
func ParseSelector(s string) ([]Matcher, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return nil, nil
	}
	if strings.HasPrefix(in, "{") {
		if !strings.HasSuffix(in, "}") {
			return nil, fmt.Errorf("selector %q: missing the closing }", s)
		}
		in = in[1 : len(in)-1]
	} else if i := strings.IndexByte(in, '{'); i > 0 {
		return nil, fmt.Errorf("selector %q: give only label matchers, like {job=\"bondtop\"}; it scopes every metric, so it names none", s)
	}
	var out []Matcher
	for {
		in = strings.TrimLeft(in, " \t\n")
		if in == "" {
			break
		}
		// The label name.
		n := 0
		for n < len(in) && (in[n] == '_' || in[n] >= 'a' && in[n] <= 'z' || in[n] >= 'A' && in[n] <= 'Z' || n > 0 && in[n] >= '0' && in[n] <= '9') {
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("selector %q: expected a label name at %q", s, in)
		}
		m := Matcher{Name: in[:n]}
		in = strings.TrimLeft(in[n:], " \t\n")
		switch {
		case strings.HasPrefix(in, "=~"), strings.HasPrefix(in, "!~"), strings.HasPrefix(in, "!="):
			m.Op, in = in[:2], in[2:]
		case strings.HasPrefix(in, "="):
			m.Op, in = "=", in[1:]
		default:
			return nil, fmt.Errorf("selector %q: expected =, !=, =~ or !~ after %s", s, m.Name)
		}
		in = strings.TrimLeft(in, " \t\n")
		v, rest, err := unquote(in)
		if err != nil {
			return nil, fmt.Errorf("selector %q: the value of %s: %w", s, m.Name, err)
		}
		m.Value, in = v, strings.TrimLeft(rest, " \t\n")
		if m.Op == "=~" || m.Op == "!~" {
			// Prometheus anchors the expression; reject what it would.
			if _, err := regexp.Compile("^(?s:" + v + ")$"); err != nil {
				return nil, fmt.Errorf("selector %q: the regular expression of %s: %w", s, m.Name, err)
			}
		}
		if m.Name == model.MetricNameLabel {
			return nil, fmt.Errorf("selector %q: it scopes every metric, so it cannot match __name__", s)
		}
		out = append(out, m)
		if in == "" {
			break
		}
		if in[0] != ',' {
			return nil, fmt.Errorf("selector %q: expected , or } at %q", s, in)
		}
		in = in[1:]
	}
	return out, nil
}

// unquote reads one quoted string at the start of s.
func unquote(s string) (value, rest string, err error) {
	if s == "" {
		return "", "", fmt.Errorf("missing")
	}
	q := s[0]
	switch q {
	case '`':
		end := strings.IndexByte(s[1:], '`')
		if end < 0 {
			return "", "", fmt.Errorf("missing the closing `")
		}
		return s[1 : 1+end], s[2+end:], nil
	case '"', '\'':
		// Find the closing quote, skipping escaped characters.
		i := 1
		for i < len(s) && s[i] != q {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(s) {
			return "", "", fmt.Errorf("missing the closing %c", q)
		}
		body := s[1:i]
		if q == '\'' {
			// strconv.Unquote reads only "..." for more than one rune.
			body = strings.ReplaceAll(body, `\'`, `'`)
			body = strings.ReplaceAll(body, `"`, `\"`)
		}
		v, err := strconv.Unquote(`"` + body + `"`)
		if err != nil {
			return "", "", fmt.Errorf("bad escape in %s", s[:i+1])
		}
		if !utf8.ValidString(v) {
			return "", "", fmt.Errorf("not UTF-8")
		}
		return v, s[i+1:], nil
	}
	return "", "", fmt.Errorf("expected a quoted string at %q", s)
}
