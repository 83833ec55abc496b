package printable

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Text is String for text laid out in lines: tab and newline pass, as the
// format printing it needs them (error messages, tables); every other
// character String rewrites is rewritten the same way.
func Text(s string) string {
	i := firstUnsafeText(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		// The run up to the next tab or newline goes through String.
		j := strings.IndexAny(s, "\t\n")
		if j < 0 {
			j = len(s)
		}
		b.WriteString(String(s[:j]))
		s = s[j:]
		for s != "" && (s[0] == '\t' || s[0] == '\n') {
			b.WriteByte(s[0])
			s = s[1:]
		}
		i = firstUnsafeText(s)
	}
	b.WriteString(s)
	return b.String()
}

// firstUnsafeText is firstUnsafe with tab and newline allowed.
func firstUnsafeText(s string) int {
	for off := 0; ; {
		i := firstUnsafe(s[off:])
		if i < 0 {
			return -1
		}
		if c := s[off+i]; c != '\t' && c != '\n' {
			return off + i
		}
		off += i + 1
	}
}

// AppendJSON appends the encoded JSON in src to dst with every character
// a terminal could act on written as a \u escape: encoding/json already
// escapes C0 controls inside strings and U+2028/U+2029, but it writes DEL,
// the C1 controls (U+0080-U+009F) and the bidirectional controls
// (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) raw, and a JSON
// line read back from a file may hold anything. Outside strings valid
// JSON is ASCII, so rewriting bytes keeps the document what it was; a
// byte of invalid UTF-8 becomes \ufffd, as encoding/json writes it. Tab,
// newline and carriage return (white space between tokens) pass.
func AppendJSON(dst, src []byte) []byte {
	i := firstUnsafeJSON(src)
	if i < 0 {
		return append(dst, src...)
	}
	dst = append(dst, src[:i]...)
	for i < len(src) {
		c := src[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
				dst = appendU(dst, rune(c))
			} else {
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = appendU(dst, utf8.RuneError)
		case unsafeRune(r):
			dst = appendU(dst, r)
		default:
			dst = append(dst, src[i:i+size]...)
		}
		i += size
	}
	return dst
}

// JSON is AppendJSON into a new slice, or b itself when it holds nothing
// to escape (no allocation).
func JSON(b []byte) []byte {
	if firstUnsafeJSON(b) < 0 {
		return b
	}
	return AppendJSON(make([]byte, 0, len(b)+16), b)
}

func firstUnsafeJSON(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

func appendU(dst []byte, r rune) []byte {
	dst = append(dst, '\\', 'u')
	for shift := 12; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[(r>>shift)&0xf])
	}
	return dst
}

// NewJSONWriter returns a writer that passes each Write through
// AppendJSON to w. Each Write must hold whole characters, as a
// json.Encoder's do (one value and its newline a call).
func NewJSONWriter(w io.Writer) io.Writer { return &jsonWriter{w: w} }

type jsonWriter struct {
	w   io.Writer
	buf []byte
}

func (j *jsonWriter) Write(p []byte) (int, error) {
	if firstUnsafeJSON(p) < 0 {
		return j.w.Write(p)
	}
	j.buf = AppendJSON(j.buf[:0], p)
	if _, err := j.w.Write(j.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// NewWriter returns a writer that passes each Write through Text to w:
// for a stream of messages (standard error) whose every line must reach
// the terminal shown, never obeyed. Each Write must hold whole
// characters, as fmt's Fprint functions do.
func NewWriter(w io.Writer) io.Writer { return textWriter{w} }

type textWriter struct{ w io.Writer }

func (t textWriter) Write(p []byte) (int, error) {
	s := string(p)
	if firstUnsafeText(s) < 0 {
		return t.w.Write(p)
	}
	if _, err := io.WriteString(t.w, Text(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}
