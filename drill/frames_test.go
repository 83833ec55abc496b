package drill

import (
	"encoding/hex"
	"testing"
)

func frame(t *testing.T, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	eth     = "ffffffffffff020000000001"
	arpHead = "0001080006040001" + "020000000001"
)

func TestPeerNotification(t *testing.T) {
	for _, c := range []struct {
		name string
		f    string
		want notificationKind
	}{
		{"gratuitous ARP request", eth + "0806" + arpHead + "c6120101" + "000000000000" + "c6120101", gratuitousARP},
		{"gratuitous ARP, VLAN 10", eth + "8100000a0806" + arpHead + "c6120101" + "000000000000" + "c6120101", gratuitousARP},
		{"ordinary ARP request", eth + "0806" + arpHead + "c6120101" + "000000000000" + "c6120102", notNotification},
		{"unsolicited NA", eth + "86dd" + "6000000000203aff" + "fe800000000000000000000000000001" + "ff020000000000000000000000000001" + "88000000" + "20000000", unsolicitedNA},
		{"solicited NA", eth + "86dd" + "6000000000203aff" + "fe800000000000000000000000000001" + "fe800000000000000000000000000002" + "88000000" + "60000000", notNotification},
		{"UDP over IPv6", eth + "86dd" + "6000000000081140" + "fe800000000000000000000000000001" + "fe800000000000000000000000000002" + "88000000" + "20000000", notNotification},
		// MLDv2 report after a hop-by-hop header with Router Alert.
		{"MLDv2 report", eth + "86dd" + "6000000000240001" + "fe800000000000000000000000000001" + "ff020000000000000000000000000016" + "3a00050200000100" + "8f000000" + "00000001", membershipReport},
		{"MLD query", eth + "86dd" + "6000000000240001" + "fe800000000000000000000000000001" + "ff020000000000000000000000000001" + "3a00050200000100" + "82000000" + "00000000", notNotification},
		// IGMPv3 report after an IPv4 header with Router Alert (IHL 6).
		{"IGMPv3 report", eth + "0800" + "46c0002800004000010200000a000001e0000016" + "94040000" + "22000000" + "00000001", membershipReport},
		{"IGMP query", eth + "0800" + "45c0001c00004000010200000a000001e0000001" + "11640000" + "00000000", notNotification},
		{"short", "ffff", notNotification},
		{"truncated ARP", eth + "0806" + "0001", notNotification},
	} {
		if got := peerNotification(frame(t, c.f)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDescribeFrame(t *testing.T) {
	for _, c := range []struct{ f, want string }{
		{eth + "0806" + "0001080006040002" + "020000000001" + "c6120101" + "020000000002" + "c6120102", "ARP reply"},
		{eth + "0800" + "4500002800004000400600000a0000010a000002", "IPv4 TCP"},
		{eth + "86dd" + "6000000000240001" + "fe800000000000000000000000000001" + "ff020000000000000000000000000016" + "3a00050200000100" + "8f000000", "ICMPv6 type 143"},
		{eth + "8809" + "0101", "LACPDU/marker"},
		{"ffff", "runt frame"},
	} {
		if got := describeFrame(frame(t, c.f)); got != c.want {
			t.Errorf("%s: %q, want %q", c.f, got, c.want)
		}
	}
}

func FuzzPeerNotification(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		peerNotification(b)
		describeFrame(b)
	})
}
