package udpstat

import (
	"os"
	"strings"
	"testing"
)

func TestFieldFromHostCapture(t *testing.T) {
	b, err := os.ReadFile("testdata/snmp-host")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint64{"InDatagrams": 2313007, "InErrors": 754742, "RcvbufErrors": 754742, "MemErrors": 0} {
		got, err := Field(b, name)
		if err != nil || got != want {
			t.Errorf("Udp %s = %d, %v; want %d", name, got, err, want)
		}
	}
}

func TestFieldErrors(t *testing.T) {
	for _, tc := range []struct{ snmp, name, want string }{
		{"Udp: InErrors\nUdp: 7\n", "NoPorts", "no Udp NoPorts"},
		{"Tcp: InErrors\nTcp: 7\n", "InErrors", "no Udp lines"},
		{"Udp: InErrors NoPorts\nUdp: 7\n", "InErrors", "1 UDP counters for 2 names"},
		{"Udp: InErrors\nUdp: -7\n", "InErrors", "Udp InErrors"},
		{"Udp: InErrors\n", "InErrors", "no Udp lines"},
	} {
		_, err := Field([]byte(tc.snmp), tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Field(%q, %s): %v; want %q", tc.snmp, tc.name, err, tc.want)
		}
	}
}

func TestInErrorsReadsThisHost(t *testing.T) {
	if _, err := InErrors(); err != nil {
		t.Fatal(err)
	}
}

func FuzzField(f *testing.F) {
	b, err := os.ReadFile("testdata/snmp-host")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, "InErrors")
	f.Add([]byte("Udp: a\nUdp: 1 2\n"), "a")
	f.Fuzz(func(t *testing.T, snmp []byte, name string) {
		v, err := Field(snmp, name)
		if err == nil && !strings.Contains(string(snmp), name) {
			t.Errorf("Udp %q = %d from a file without that name", name, v)
		}
	})
}
