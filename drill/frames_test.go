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
		{"short", "ffff", notNotification},
		{"truncated ARP", eth + "0806" + "0001", notNotification},
	} {
		if got := peerNotification(frame(t, c.f)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func FuzzPeerNotification(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) { peerNotification(b) })
}
