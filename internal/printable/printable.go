// Package printable owns the one rule for putting text that came from
// outside bondtop (interface names from sysfs and procfs, a copied --root
// tree, a recording made on another host) on a terminal: control
// characters are shown, never obeyed.
//
// Linux accepts almost any byte in an interface name, and a tree or a
// recording from another host can hold anything, so a name like
// "bond\x1b[2J" would clear the screen of whoever prints it. Every text
// printer passes such strings through String (a field) or Text (a
// message of lines; NewWriter for a stream such as standard error). JSON
// output passes through AppendJSON or NewJSONWriter: encoding/json
// escapes C0 controls but writes DEL, C1 controls and bidirectional
// overrides raw, and `jq -r` or a log viewer would print them as they are.
// The threat model is docs/security.md.
package printable

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// String returns s with every character a terminal could act on made
// visible: C0 controls and DEL as \xNN (ESC is \x1b), C1 controls and the
// bidirectional overrides that reorder what is shown as \uNNNN, and each
// byte of invalid UTF-8 as \xNN. Anything else passes unchanged; a string
// with nothing to escape is returned as is, without allocating.
func String(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeByte(&b, s[i])
		case r < 0x20 || r == 0x7f:
			writeByte(&b, byte(r))
		case unsafeRune(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>shift)&0xf])
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of the first byte String must rewrite, or -1.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune reports the non-ASCII runes a terminal acts on or that change
// the order text is shown in: C1 controls (U+0080-U+009F; U+009B is CSI
// on terminals that take 8-bit controls), the bidirectional embeddings,
// overrides and isolates, and the line and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

func writeByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}
