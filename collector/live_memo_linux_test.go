package collector

import (
	"reflect"
	"testing"

	"github.com/vishvananda/netlink"
)

// FuzzLinkMemo: comparing two link messages and reading counters out of
// one never panics on any bytes, the comparison is symmetric, and when it
// says two messages differ only in their counters, both decode to the
// same link but for its statistics, which readLinkStats reads as the
// decoder does: the memo hands out what decoding would have.
func FuzzLinkMemo(f *testing.F) {
	f.Add(lacpSlaveMsg(4, "e1", 1, 7000), lacpSlaveMsg(4, "e1", 1, 7100))
	f.Add(lacpSlaveMsg(4, "e1", 1, 7000), lacpSlaveMsg(4, "e1", 2, 7000))
	f.Add(lacpBondMsg(true, 0), lacpBondMsg(true, 3))
	f.Add(lacpBondMsg(false, 0), lacpBondMsg(false, 0))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		same := sameButCounters(a, b)
		if same != sameButCounters(b, a) {
			t.Fatalf("not symmetric: %v one way", same)
		}
		var st netlink.LinkStatistics
		readOK := len(b) >= 16 && readLinkStats(b, &st)
		if !same {
			return
		}
		la, erra := deserializeLink(a)
		lb, errb := deserializeLink(b)
		if erra != nil || errb != nil {
			return // decode fails on both or on the counters alone: no memo then
		}
		if sb := lb.Attrs().Statistics; sb != nil && (!readOK || st != *sb) {
			t.Fatalf("readLinkStats %v %+v, decoder %+v", readOK, st, *sb)
		}
		la.Attrs().Statistics, lb.Attrs().Statistics = nil, nil
		if !reflect.DeepEqual(la, lb) {
			t.Fatalf("same but counters, yet the links differ:\n%+v\n%+v", la, lb)
		}
	})
}
