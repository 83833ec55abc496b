package printable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// every is each character the package rewrites: C0, DEL, C1, the bidi
// and line separator controls.
func every() []rune {
	var rs []rune
	for r := rune(0); r <= 0x9f; r++ {
		if r < 0x20 || r >= 0x7f {
			rs = append(rs, r)
		}
	}
	rs = append(rs, 0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069)
	return rs
}

// checkJSON fails when out holds a raw character a terminal acts on.
func checkJSON(t *testing.T, in, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Fatalf("AppendJSON(%q) = %q: not valid UTF-8", in, out)
	}
	for _, r := range string(out) {
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f || unsafeRune(r) {
			t.Fatalf("AppendJSON(%q) = %q: still holds %U", in, out, r)
		}
	}
}

// TestJSONEveryControl: each control inside a name, encoded by
// encoding/json, comes out as a \u escape and decodes back to the name.
func TestJSONEveryControl(t *testing.T) {
	for _, r := range every() {
		name := "eth" + string(r) + "0"
		enc, err := json.Marshal(map[string]string{"slave": name})
		if err != nil {
			t.Fatal(err)
		}
		out := JSON(enc)
		checkJSON(t, enc, out)
		if r >= 0x20 && !bytes.Contains(out, []byte(fmt.Sprintf(`\u%04x`, r))) {
			t.Errorf("%U: %s has no \\u%04x", r, out, r)
		}
		var back map[string]string
		if err := json.Unmarshal(out, &back); err != nil || back["slave"] != name {
			t.Errorf("%U: %s decodes to %q, %v", r, out, back["slave"], err)
		}
	}
}

func TestJSONPlainUnchanged(t *testing.T) {
	in := []byte("{\n  \"name\": \"bönd-链路0 🙂\",\t\"x\": [1, 2]\r\n}\n")
	out := JSON(in)
	if &out[0] != &in[0] {
		t.Errorf("a plain document was copied")
	}
	if n := testing.AllocsPerRun(100, func() { _ = JSON(in) }); n != 0 {
		t.Errorf("a plain document costs %v allocations", n)
	}
	// Invalid UTF-8 in a line read back from a file is U+FFFD, as
	// encoding/json writes it.
	if got := string(JSON([]byte("\"a\xffb\""))); got != `"a\ufffdb"` {
		t.Errorf("invalid UTF-8: %s", got)
	}
}

func TestJSONWriter(t *testing.T) {
	var b bytes.Buffer
	enc := json.NewEncoder(NewJSONWriter(&b))
	if err := enc.Encode([]string{"a\u009b2J", "b\u202ec", "\x7f"}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), `["a\u009b2J","b\u202ec","\u007f"]`+"\n"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"plain\n": "plain\n",
		"a\tb\nc": "a\tb\nc",
		"flag provided but not defined: -x\x1by\n": `flag provided but not defined: -x\x1by` + "\n",
		"\x1b[2J\n\u009b\t\u202e\r\n":              `\x1b[2J` + "\n" + `\u009b` + "\t" + `\u202e\x0d` + "\n",
		"":                                         "",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(NewWriter(&b), "bondtop: serve: listening on %s: bad\n", "a\x1bb\u0085")
	if got, want := b.String(), `bondtop: serve: listening on a\x1bb\u0085: bad`+"\n"; got != want {
		t.Errorf("NewWriter: %q, want %q", got, want)
	}
}

func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a":"b\u00c2"}`))
	f.Add([]byte("\"\xc2\x9b\xe2\x80\xae\x7f\xff\""))
	f.Fuzz(func(t *testing.T, in []byte) {
		out := AppendJSON(nil, in)
		checkJSON(t, in, out)
		if !bytes.Equal(AppendJSON(nil, out), out) {
			t.Fatalf("AppendJSON is not stable on its own output: %q", out)
		}
		// A valid document stays one, with the same value.
		var a, b any
		if utf8.Valid(in) && json.Unmarshal(in, &a) == nil {
			if err := json.Unmarshal(out, &b); err != nil {
				t.Fatalf("%q became invalid: %q: %v", in, out, err)
			}
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%q changed value: %v != %v", in, a, b)
			}
		}
	})
}

func FuzzText(f *testing.F) {
	f.Add("a\tb\nc\x1b")
	f.Fuzz(func(t *testing.T, in string) {
		out := Text(in)
		checkShown(t, in, strings.NewReplacer("\t", "", "\n", "").Replace(out))
		if strings.Count(out, "\n") != strings.Count(in, "\n") {
			t.Fatalf("Text(%q) = %q changed the lines", in, out)
		}
		if Text(out) != out {
			t.Fatalf("Text is not stable on its own output: %q", out)
		}
	})
}
