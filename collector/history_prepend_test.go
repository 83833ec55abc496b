package collector

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// rates is a bond sample with its rx rate and each slave's.
func rates(rx float64, slaves ...float64) model.BondSample {
	b := model.BondSample{Bond: bonding.Bond{Name: "b"}}
	b.RxBps = &rx
	for i, v := range slaves {
		s := model.SlaveSample{Slave: bonding.Slave{Name: fmt.Sprintf("s%d", i)}}
		s.RxBps = &v
		b.Slaves = append(b.Slaves, s)
	}
	return b
}

func pointsText(ps []Point, t0 time.Time) string {
	var out []string
	for _, p := range ps {
		v := "NaN"
		if !math.IsNaN(float64(p.Value)) {
			v = fmt.Sprint(p.Value)
		}
		out = append(out, fmt.Sprintf("%v=%s", p.Time.Sub(t0), v))
	}
	return strings.Join(out, " ")
}

// TestHistoryPrepend: a past put in front of what the history holds
// comes first, oldest first; a past sample not older than the first
// held is left out; a slave the past did not have is a gap there, and
// one only the past had is a gap after it.
func TestHistoryPrepend(t *testing.T) {
	h := NewHistory(time.Hour, time.Second)
	t0 := time.Unix(1_000_000, 0)
	for i := range 3 {
		b := rates(float64(10+i), float64(100+i))
		h.Record(&model.Snapshot{Time: t0.Add(time.Duration(i) * time.Second), Bonds: []model.BondSample{b}})
	}
	past := []model.BondSample{rates(1, 7, 70), rates(2, 8, 80), rates(3, 9, 90)}
	h.Prepend("b", []time.Time{t0.Add(-30 * time.Second), t0.Add(-15 * time.Second), t0}, past)

	if got, want := pointsText(h.Since(Series{Bond: "b"}, time.Time{}), t0), "-30s=1 -15s=2 0s=10 1s=11 2s=12"; got != want {
		t.Errorf("bond rx: %s\nwant      %s", got, want)
	}
	if got, want := pointsText(h.Since(Series{Bond: "b", Slave: "s0"}, time.Time{}), t0), "-30s=7 -15s=8 0s=100 1s=101 2s=102"; got != want {
		t.Errorf("s0 rx: %s\nwant    %s", got, want)
	}
	if got, want := pointsText(h.Since(Series{Bond: "b", Slave: "s1"}, time.Time{}), t0), "-30s=70 -15s=80 0s=NaN 1s=NaN 2s=NaN"; got != want {
		t.Errorf("s1 rx (gone since the past): %s\nwant    %s", got, want)
	}
	// The history goes on after it.
	h.Record(&model.Snapshot{Time: t0.Add(3 * time.Second), Bonds: []model.BondSample{rates(13, 103)}})
	if got, want := pointsText(h.Since(Series{Bond: "b"}, t0.Add(time.Second)), t0), "1s=11 2s=12 3s=13"; got != want {
		t.Errorf("after: %s, want %s", got, want)
	}
	// A bond never recorded takes the past as its history.
	h.Prepend("new", []time.Time{t0}, []model.BondSample{rates(5)})
	if got := pointsText(h.Since(Series{Bond: "new"}, time.Time{}), t0); got != "0s=5" {
		t.Errorf("a new bond: %s", got)
	}
	// Below a second's pace it does nothing.
	fast := NewHistory(time.Hour, 100*time.Millisecond)
	fast.Record(&model.Snapshot{Time: t0, Bonds: []model.BondSample{rates(10)}})
	fast.Prepend("b", []time.Time{t0.Add(-time.Minute)}, past[:1])
	if got := pointsText(fast.Since(Series{Bond: "b"}, time.Time{}), t0); got != "0s=10" {
		t.Errorf("at 100 ms: %s, want the history untouched", got)
	}
}
