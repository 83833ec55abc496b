package live

import (
	"reflect"
	"testing"

	"github.com/vishvananda/netlink"
)

// FuzzLinkMemo: finding a link message's counters, comparing another
// with it and reading counters out of it never panic on any bytes, the
// comparison is symmetric, and when it says two messages differ only in
// their counters, both decode to the same link but for its statistics,
// which readStats reads (at the first one's places, as the memo does) as
// the decoder does: the memo hands out what decoding would have.
func FuzzLinkMemo(f *testing.F) {
	f.Add(lacpSlaveMsg(4, "e1", 1, 7000), lacpSlaveMsg(4, "e1", 1, 7100))
	f.Add(lacpSlaveMsg(4, "e1", 1, 7000), lacpSlaveMsg(4, "e1", 2, 7000))
	f.Add(lacpBondMsg(true, 0), lacpBondMsg(true, 3))
	f.Add(lacpBondMsg(false, 0), lacpBondMsg(false, 0))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		la := counterSpans(a)
		same := la.sameOutside(a, b)
		lb := counterSpans(b)
		if same != lb.sameOutside(b, a) {
			t.Fatalf("not symmetric: %v one way", same)
		}
		if !same {
			return
		}
		if la != lb {
			t.Fatalf("the same but for counters, yet laid out apart: %+v, %+v", la, lb)
		}
		var st netlink.LinkStatistics
		readOK := la.readStats(b, &st)
		linkA, erra := deserializeLink(a)
		linkB, errb := deserializeLink(b)
		if erra != nil || errb != nil {
			return // decode fails on both or on the counters alone: no memo then
		}
		if sb := linkB.Attrs().Statistics; sb != nil && (!readOK || st != *sb) {
			t.Fatalf("readStats %v %+v, decoder %+v", readOK, st, *sb)
		}
		linkA.Attrs().Statistics, linkB.Attrs().Statistics = nil, nil
		if !reflect.DeepEqual(linkA, linkB) {
			t.Fatalf("same but counters, yet the links differ:\n%+v\n%+v", linkA, linkB)
		}
	})
}
