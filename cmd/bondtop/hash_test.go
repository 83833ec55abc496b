package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
)

// runHashWith runs `bondtop hash args` with stdin and returns the exit
// code, stdout and stderr.
func runHashWith(args []string, stdin string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runHash(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// `bondtop hash` reaches runHash.
func TestHashDispatch(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"hash", "--policy", "layer2"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--src-mac") {
		t.Errorf("bondtop hash --policy layer2: exit %d, stderr %q", code, errb.String())
	}
}

var offline = []string{"--policy", "layer3+4", "--slaves", "eth0,eth1,eth2", "--src-mac", "52:54:00:12:34:05", "--kernel", "6.1"}

// The flows of bonding's vectors give the same answers through the
// command: 10.0.0.1:1000 -> 10.0.0.2:53 hashes to 0x1b1b6f6e, % 3 = 2.
func TestHashOffline(t *testing.T) {
	in := "10.0.0.1 10.0.0.2 1000 53 52:54:00:ab:cd:0a\n" +
		"\n" +
		"# a comment\n" +
		"2001:db8::1\t2001:db8::2   40000 443 52-54-00-ab-cd-0a\n"
	code, out, errs := runHashWith(offline, in)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := "eth2 0x1b1b6f6e 2\n\n# a comment\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("stdout %q, want it to start with %q", out, want)
	}
	if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(lines) != 4 || strings.Fields(lines[3])[0] == "-" {
		t.Errorf("stdout %q: want 4 lines, the last one answered", out)
	}
}

// Bad lines: "- error" in their place, the line number on stderr, exit 1,
// and every good line still answered.
func TestHashOfflineBadLines(t *testing.T) {
	in := "10.0.0.1 10.0.0.2 1000 53 52:54:00:ab:cd:0a\n" +
		"10.0.0.1 10.0.0.2 1000 53\n" +
		"10.0.0.1 ::2 1000 53 52:54:00:ab:cd:0a\n" +
		"10.0.0.1 10.0.0.2 70000 53 52:54:00:ab:cd:0a\n" +
		"10.0.0.1 10.0.0.2 1000 53 52:54:00:ab:cd\n" +
		"10.0.0.x 10.0.0.2 1000 53 52:54:00:ab:cd:0a\n" +
		"10.0.0.1 10.0.0.2 1000 53 52:54:00:ab:cd:0a\n"
	code, out, errs := runHashWith(offline, in)
	if code != exitRuntime {
		t.Errorf("exit %d, want %d", code, exitRuntime)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("%d output lines for 7 input lines: %q", len(lines), out)
	}
	for i, l := range lines {
		good := i == 0 || i == 6
		if first := strings.Fields(l)[0]; (first == "eth2") != good || (!good && l != "- error") {
			t.Errorf("line %d: %q", i+1, l)
		}
	}
	for _, want := range []string{"line 2: 4 fields", "line 3: 10.0.0.1 and ::2", "line 4: source port", "line 5: destination MAC", "line 6: source address", "5 of 7 lines"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

// encap3+4 depends on the socket hash unless told there is none.
func TestHashOfflineUnpredictable(t *testing.T) {
	args := []string{"--policy", "encap3+4", "--slaves", "eth0,eth1,eth2", "--src-mac", "52:54:00:12:34:05", "--kernel", "6.1"}
	in := "10.0.0.1 10.0.0.2 1000 53 52:54:00:ab:cd:0a\n10.0.0.1 10.0.0.2 1001 53 52:54:00:ab:cd:0a\n"
	code, out, errs := runHashWith(args, in)
	if code != exitOK || out != "- unpredictable\n- unpredictable\n" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if strings.Count(errs, "note:") != 1 || !strings.Contains(errs, "--no-l4-hash") {
		t.Errorf("stderr %q: want one note naming --no-l4-hash", errs)
	}
	code, out, _ = runHashWith(append(args, "--no-l4-hash"), in)
	if code != exitOK || !strings.HasPrefix(out, "eth2 0x1b1b6f6e 2\n") {
		t.Errorf("--no-l4-hash: exit %d, stdout %q", code, out)
	}
}

// The kernel version changes answers: layer2+3 shifts on 5.15.37, not on
// 5.15.38 (0x01818582 vs 0x03030b04 for the vector flow).
func TestHashOfflineKernel(t *testing.T) {
	in := "10.0.0.1 10.0.0.2 1000 53 52:54:00:ab:cd:0a\n"
	base := []string{"--policy", "layer2+3", "--slaves", "a,b,c,d", "--src-mac", "52:54:00:12:34:05"}
	for kernel, want := range map[string]string{"5.15.37": "c 0x1818582 2\n", "5.15.38": "a 0x3030b04 0\n"} {
		code, out, errs := runHashWith(append(base, "--kernel", kernel), in)
		if code != exitOK || out != want {
			t.Errorf("--kernel %s: exit %d, stdout %q (stderr %q), want %q", kernel, code, out, errs, want)
		}
	}
	code, _, errs := runHashWith(append(base, "--kernel", "5.10", "--policy", "vlan+srcmac"), in)
	if code != exitUsage || !strings.Contains(errs, "5.12") {
		t.Errorf("vlan+srcmac on 5.10: exit %d, stderr %q", code, errs)
	}
}

func TestHashArgs(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "give a bond and a destination"},
		{[]string{"bond0"}, "give a bond and a destination"},
		{[]string{"--policy", "layer2"}, "needs --policy, --slaves and --src-mac"},
		{append([]string{"bond0", "10.0.0.1:80"}, offline...), "not both"},
		{[]string{"bond0", "10.0.0.1:80", "--proto", "sctp"}, "tcp or udp"},
		{[]string{"bond0", "10.0.0.1:80", "--sport", "70000"}, "0 to 65535"},
		{[]string{"--policy", "layer9", "--slaves", "a", "--src-mac", "00:00:00:00:00:01", "--kernel", "6.1"}, "unknown xmit_hash_policy"},
		{[]string{"--policy", "layer2", "--slaves", "a", "--src-mac", "zz", "--kernel", "6.1"}, "--src-mac"},
		{[]string{"--policy", "layer2", "--slaves", " , ", "--src-mac", "00:00:00:00:00:01", "--kernel", "6.1"}, "--slaves"},
		{[]string{"--policy", "layer2", "--slaves", "a", "--src-mac", "00:00:00:00:00:01", "--kernel", "six"}, "--kernel"},
	} {
		code, _, errs := runHashWith(tt.args, "")
		if code != exitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("hash %q: exit %d, stderr %q; want %d and %q", tt.args, code, errs, exitUsage, tt.want)
		}
	}
	for in, want := range map[string]string{"10.0.0.5:443": "10.0.0.5", "[2001:db8::5]:443": "2001:db8::5", "[fe80::1%eth0]:22": "fe80::1"} {
		a, _, err := parseDest(in)
		if err != nil || a.String() != want {
			t.Errorf("parseDest(%q) = %v, %v", in, a, err)
		}
	}
	for _, in := range []string{"10.0.0.5", "host:443", ""} {
		if _, _, err := parseDest(in); err == nil {
			t.Errorf("parseDest(%q): no error", in)
		}
	}
}

func TestParseMAC(t *testing.T) {
	want := [6]byte{0x52, 0x54, 0x00, 0xab, 0xcd, 0x0a}
	for _, in := range []string{"52:54:00:ab:cd:0a", "52-54-00-AB-CD-0A", "5254.00ab.cd0a"} {
		if got, err := parseMAC(in); err != nil || got != want {
			t.Errorf("parseMAC(%q) = %x, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "52:54:00:ab:cd", "52:54:00:ab:cd:0a:01", "52:54-00:ab:cd:0a", "52:54:00:ab:cd:0g", "5254.00ab.cd0", "00:00:00:00:00:00:00:01"} {
		if _, err := parseMAC(in); err == nil {
			t.Errorf("parseMAC(%q): no error", in)
		}
	}
	var f [5]string
	if n := splitFields(" a\tb  c \r", f[:]); n != 3 || f[0] != "a" || f[1] != "b" || f[2] != "c" {
		t.Errorf("splitFields: %d %q", n, f)
	}
	if n := splitFields("1 2 3 4 5 6 7", f[:]); n != 7 || f[4] != "5" {
		t.Errorf("splitFields over 5: %d %q", n, f)
	}
}

// A million flows through the offline command, to see the command's own
// cost next to the hash's.
func BenchmarkHashOffline(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var in strings.Builder
	const n = 100_000
	for range n {
		a := netip.AddrFrom4([4]byte{10, byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256))})
		fmt.Fprintf(&in, "10.0.0.1 %s %d %d 52:54:00:ab:cd:%02x\n", a, r.IntN(65536), r.IntN(65536), r.IntN(256))
	}
	text := in.String()
	b.ResetTimer()
	for b.Loop() {
		var out, errb bytes.Buffer
		if code := runHash(offline, strings.NewReader(text), &out, &errb); code != exitOK {
			b.Fatal(errb.String())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/line")
}
