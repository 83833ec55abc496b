// Command check-links checks that every relative link in the project's
// Markdown (README.md, CHANGELOG.md, docs/*.md) resolves: the file or
// directory it names exists, and a #fragment names a heading of the target
// page as GitHub renders it. Links with a scheme (https:, mailto:) are not
// followed. Links inside code spans and fenced code blocks are not links.
//
// Run from the repository root (`make lint` does): it prints each broken
// link as FILE:LINE: TARGET: why, and exits 1 if there is one.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	os.Exit(run(root, os.Stdout, os.Stderr))
}

// run checks the pages under root and reports to stdout; the exit code is
// 0 when every link resolves, 1 when one does not, 2 when the pages could
// not be listed.
func run(root string, stdout, stderr io.Writer) int {
	pages, err := pagesUnder(root)
	if err != nil {
		fmt.Fprintf(stderr, "check-links: %v\n", err)
		return 2
	}
	broken := 0
	for _, p := range pages {
		probs, err := checkPage(root, p)
		if err != nil {
			fmt.Fprintf(stderr, "check-links: %v\n", err)
			return 2
		}
		for _, pr := range probs {
			fmt.Fprintln(stdout, pr)
		}
		broken += len(probs)
	}
	if broken > 0 {
		fmt.Fprintf(stdout, "check-links: %d broken relative link(s) in %d page(s)\n", broken, len(pages))
		return 1
	}
	return 0
}

// pagesUnder lists the pages whose links are checked, relative to root.
func pagesUnder(root string) ([]string, error) {
	var pages []string
	for _, top := range []string{"README.md", "CHANGELOG.md"} {
		if _, err := os.Stat(filepath.Join(root, top)); err == nil {
			pages = append(pages, top)
		}
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			return nil, err
		}
		pages = append(pages, rel)
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("no README.md, CHANGELOG.md or docs/*.md under %s", root)
	}
	return pages, nil
}

// A link is one link target found on a page.
type link struct {
	line   int
	target string
}

var (
	// inline matches [text](target) and ![alt](target); the target ends
	// at the first space (a title may follow) or closing parenthesis.
	inline = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refdef matches a reference definition: [id]: target
	refdef = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	// linkText matches a link in a heading, whose id has the text only.
	linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// linksOf returns the link targets of a Markdown text, outside fenced
// code blocks and code spans, with their line numbers.
func linksOf(text string) []link {
	var out []link
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		line = stripCodeSpans(line)
		for _, m := range inline.FindAllStringSubmatch(line, -1) {
			out = append(out, link{i + 1, m[1]})
		}
		if m := refdef.FindStringSubmatch(line); m != nil {
			out = append(out, link{i + 1, m[1]})
		}
	}
	return out
}

// stripCodeSpans blanks `code spans` (of any number of backticks), whose
// brackets and parentheses are text, not links.
func stripCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		ticks := line[i : i+n]
		end := strings.Index(line[i+n:], ticks)
		if end < 0 { // no closing run: the backticks are literal
			b.WriteString(ticks)
			i += n
			continue
		}
		i += n + end + n
		b.WriteString(" ")
	}
	return b.String()
}

// checkPage returns a line for each link of page (relative to root) that
// does not resolve.
func checkPage(root, page string) ([]string, error) {
	text, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		return nil, err
	}
	var probs []string
	for _, l := range linksOf(string(text)) {
		if why := resolve(root, page, l.target); why != "" {
			probs = append(probs, fmt.Sprintf("%s:%d: %s: %s", page, l.line, l.target, why))
		}
	}
	return probs, nil
}

// resolve says why target, a link on page, does not resolve ("" when it
// does).
func resolve(root, page, target string) string {
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return "" // another site: not ours to check
	}
	path, frag, _ := strings.Cut(target, "#")
	file := page
	if path != "" {
		if strings.HasPrefix(path, "/") {
			return "an absolute path: link relative to the page"
		}
		file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
		rel, err := filepath.Rel(root, filepath.Join(root, file))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "leads out of the repository"
		}
		info, err := os.Stat(filepath.Join(root, file))
		if err != nil {
			return "no such file"
		}
		if info.IsDir() {
			if frag != "" {
				return "a #fragment on a directory"
			}
			return ""
		}
	}
	if frag == "" {
		return ""
	}
	if !strings.HasSuffix(file, ".md") {
		return "" // a fragment of a non-Markdown file (a line, say): not checked
	}
	text, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return err.Error()
	}
	for _, a := range anchorsOf(string(text)) {
		if a == frag {
			return ""
		}
	}
	return "no heading #" + frag + " in " + filepath.ToSlash(file)
}

// anchorsOf returns the ids GitHub gives the headings of a Markdown text:
// lower case, punctuation dropped except '-' and '_', spaces as '-', and
// -1, -2, ... after a repeated one.
func anchorsOf(text string) []string {
	var out []string
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if len(title) == len(line) || len(line)-len(title) > 6 || (title != "" && title[0] != ' ') {
			continue
		}
		title = linkText.ReplaceAllString(title, "$1")
		id := slug(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(title), "#")))
		if n, ok := seen[id]; ok {
			seen[id] = n + 1
			id = fmt.Sprintf("%s-%d", id, n+1)
		} else {
			seen[id] = 0
		}
		out = append(out, id)
	}
	return out
}

// slug is GitHub's heading id: letters, digits, '-' and '_' kept (lower
// case), spaces turned to '-', everything else dropped.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
