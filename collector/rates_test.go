package collector

import (
	"encoding/json"
	"testing"

	"github.com/bondtop/bondtop/bonding"
)

// TestTrafficCountersByName holds every counter to the field of Totals
// and of the interval's ErrorCounts that carries it, by the kernel's name
// (the JSON name): the rates walk the counters by number, and a field in
// the wrong place would swap two of them silently. A counter missing from
// one reading has a total but no interval count.
func TestTrafficCountersByName(t *testing.T) {
	var prev, cur bonding.Counters
	for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
		prev.Set(c, 1000*uint64(c+1))
		if c != bonding.TxDropped {
			cur.Set(c, 1000*uint64(c+1)+uint64(c+1))
		}
	}
	var nums numbers
	tr := traffic(&nums, &prev, true, &cur, 2)
	totals, errs := map[string]uint64{}, map[string]*uint64{}
	for what, v := range map[string]any{"totals": tr.Totals, "interval": tr.Interval} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if what == "totals" {
			var m map[string]*uint64
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			for k, p := range m {
				if p != nil {
					totals[k] = *p
				}
			}
		} else if err := json.Unmarshal(b, &errs); err != nil {
			t.Fatal(err)
		}
	}
	for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
		name := c.String()
		want, ok := cur.Get(c)
		if got, has := totals[name]; has != ok || got != want {
			t.Errorf("total %s = %d (%v), want %d (%v)", name, got, has, want, ok)
		}
		if c < bonding.RxErrors {
			continue
		}
		got, has := errs[name]
		switch {
		case !has:
			t.Errorf("the interval has no field %s", name)
		case c == bonding.TxDropped && got != nil:
			t.Errorf("interval %s = %d, want none (the second reading lacks it)", name, *got)
		case c != bonding.TxDropped && got == nil:
			t.Errorf("interval %s missing, want %d", name, c+1)
		case c != bonding.TxDropped && *got != uint64(c+1):
			t.Errorf("interval %s = %d, want %d", name, *got, c+1)
		}
	}
	if tr.RxBps == nil || *tr.RxBps != 1*8/2.0 || tr.TxPps == nil || *tr.TxPps != 4/2.0 {
		t.Errorf("rates %v bit/s rx, %v packets/s tx; want 4 and 2", tr.RxBps, tr.TxPps)
	}
}
