package ovs

import (
	"encoding/json"
	"testing"
)

// BenchmarkHostFromReplies is the CPU of one read without the sockets:
// decoding the OVSDB reply of four bonds and parsing the three texts.
func BenchmarkHostFromReplies(b *testing.B) {
	tr := json.RawMessage(fixture(b, "transact.json"))
	bs, ls, st := fixture(b, "bond-show.txt"), fixture(b, "lacp-show.txt"), fixture(b, "lacp-show-stats.txt")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := HostFromReplies(tr, bs, ls, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseBondShow(b *testing.B) {
	text := fixture(b, "bond-show.txt")
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseBondShow(text); err != nil {
			b.Fatal(err)
		}
	}
}
