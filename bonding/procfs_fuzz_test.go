package bonding

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseProc feeds the parser mutations of every fixture. It must never
// panic, must fail only with ErrNotBondingFile, and what it returns must
// keep the invariants of checkProcInvariants whatever the input.
func FuzzParseProc(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(procDir, "*.txt"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no fixtures in %s: %v", procDir, err)
	}
	for _, file := range files {
		f.Add(readProcFixture(f, filepath.Base(file)))
	}
	// Short inputs that reach the odd paths directly.
	for _, s := range []string{
		"",
		"Slave Interface:\nMII Status: up\n",
		"Slave Interface: a\nSlave Interface: a\ndetails actor lacp pdu:\nport state: 999\n",
		"Bonding Mode: IEEE 802.3ad Dynamic link aggregation (fail_over_mac )\n",
		"ARP IP target/s (n.n.n.n form): 1.2.3.4,, 5.6.7.8\n",
		"Bonding Mode: x\nbond  has no active aggregator\nAggregator ID: -0\n",
		"Ethernet Channel Bonding Driver: v\nEthernet Channel Bonding Driver: v1\nSlave Interface: b\n",
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		b, unknown, err := ParseProc("bond0", data)
		if !bytes.Equal(orig, data) {
			t.Fatalf("ParseProc changed its input")
		}
		if err != nil {
			if !errors.Is(err, ErrNotBondingFile) {
				t.Fatalf("error %v is not ErrNotBondingFile", err)
			}
			if b.Name != "bond0" || b.Mode != nil || b.Slaves != nil || b.LACP != nil || unknown != nil {
				t.Fatalf("on error got %+v, %q; want only the name", b, unknown)
			}
			return
		}
		if b.Name != "bond0" {
			t.Fatalf("name %q", b.Name)
		}
		checkProcInvariants(t, b, unknown)

		// Every slave comes from a "Slave Interface" line, and every
		// unknown line from a line of the input.
		if n := bytes.Count(data, []byte("Slave Interface")); len(b.Slaves) > n {
			t.Fatalf("%d slaves from %d header lines", len(b.Slaves), n)
		}
		if n := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) + 1; len(unknown) > n {
			t.Fatalf("%d unknown lines from %d lines", len(unknown), n)
		}
		for _, l := range unknown {
			if !bytes.Contains(data, []byte(l)) {
				t.Fatalf("unknown line %q is not in the input", l)
			}
		}
		// Without a trailing blank the parse must not change: every line
		// is trimmed anyway.
		if !bytes.ContainsAny(data, "\r\t") {
			b2, unknown2, err2 := ParseProc("bond0", []byte(strings.ReplaceAll(string(data), "\n", " \r\n")))
			if err2 != nil {
				t.Fatalf("with CRLF: %v", err2)
			}
			// DeepEqual first: cmp would halve the fuzzing rate.
			if !reflect.DeepEqual(b, b2) || !reflect.DeepEqual(unknown, unknown2) {
				t.Fatalf("CRLF changed the result (-LF +CRLF):\n%s%s", cmp.Diff(b, b2, procCmp), cmp.Diff(unknown, unknown2))
			}
		}
	})
}
