package printable

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkShown fails when out could still make a terminal act: a C0 or DEL
// byte, a C1 rune, a bidi control, or invalid UTF-8.
func checkShown(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("String(%q) = %q: not valid UTF-8", in, out)
	}
	for _, r := range out {
		if r < 0x20 || r == 0x7f || unsafeRune(r) {
			t.Fatalf("String(%q) = %q: still holds %U", in, out, r)
		}
	}
}

// TestEveryControlByte feeds every C0 byte, DEL, every C1 control both as
// a rune (its UTF-8 encoding) and as a bare byte (invalid UTF-8), each
// alone and inside a name.
func TestEveryControlByte(t *testing.T) {
	for c := 0; c <= 0x9f; c++ {
		if c >= 0x20 && c < 0x7f {
			continue
		}
		var inputs []string
		want := fmt.Sprintf(`\x%02x`, c)
		if c < 0x80 {
			inputs = []string{string(rune(c))}
		} else {
			// A C1 control as a rune is \u00NN; the same value as a lone
			// byte is invalid UTF-8 and shows as \xNN.
			inputs = []string{string(rune(c)), string([]byte{byte(c)})}
		}
		for k, in := range inputs {
			w := want
			if c >= 0x80 && k == 0 {
				w = fmt.Sprintf(`\u%04x`, c)
			}
			if got := String(in); got != w {
				t.Errorf("String(%q) = %q, want %q", in, got, w)
			}
			name := "bond" + in + "0"
			got := String(name)
			if got != "bond"+w+"0" {
				t.Errorf("String(%q) = %q, want %q", name, got, "bond"+w+"0")
			}
			checkShown(t, name, got)
		}
	}
}

func TestAttackNames(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[2J\x1b]0;pwned\x07bond0": `\x1b[2J\x1b]0;pwned\x07bond0`,
		"eth0\u009b2J":                 `eth0\u009b2J`,
		"eth\u202e1":                   `eth\u202e1`,
		"a\xff\xfeb":                   `a\xff\xfeb`,
		"\xc0\xaf":                     `\xc0\xaf`,     // overlong '/'
		"\xed\xa0\x80":                 `\xed\xa0\x80`, // a UTF-16 surrogate
		"\xe2\x82":                     `\xe2\x82`,     // cut short
		"line\nfake":                   `line\x0afake`,
		"tab\tcol":                     `tab\x09col`,
	} {
		got := String(in)
		if got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
		checkShown(t, in, got)
	}
}

// TestPlainUnchanged: ordinary names, non-ASCII letters and symbols pass
// as they are, without allocating.
func TestPlainUnchanged(t *testing.T) {
	for _, in := range []string{"", "bond0", "eth0.100", "bönd-ünter", "链路0", "🙂", `back\slash`, "52:54:00:12:34:56"} {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
	s := strings.Repeat("enp3s0f1 ", 10)
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Errorf("a plain string costs %v allocations", n)
	}
}

func FuzzString(f *testing.F) {
	f.Add("bond0")
	f.Add("\x1b[2J\x1b]0;x\x07")
	f.Add("\xc2\x9b\xff")
	f.Fuzz(func(t *testing.T, in string) {
		out := String(in)
		checkShown(t, in, out)
		if firstUnsafe(in) < 0 && out != in {
			t.Fatalf("String(%q) = %q changed a safe string", in, out)
		}
		if String(out) != out {
			t.Fatalf("String is not stable on its own output: %q", out)
		}
	})
}
