package collector

import (
	"context"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// pastSource is one bond whose past it holds: it stands in for the
// fleet's Prometheus, whose Past is tested against a real one
// (cmd/bondtop, TestFleetFromPrometheus).
type pastSource struct {
	past  time.Time
	asked chan string
}

func (p *pastSource) Read() (Reading, error) {
	return Reading{Bonds: []bonding.Bond{{Name: "h/bond0"}}}, nil
}
func (p *pastSource) Close() error { return nil }
func (p *pastSource) Past(_ context.Context, bond string, from, to time.Time) ([]time.Time, []model.BondSample, error) {
	p.asked <- bond
	s := rates(42)
	s.Name = bond
	return []time.Time{p.past}, []model.BondSample{s}, nil
}

// TestFocusBackfills: a bond that comes on screen gets its past from a
// Backfiller source in front of its history, once.
func TestFocusBackfills(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	src := &pastSource{past: now.Add(-30 * time.Minute), asked: make(chan string, 4)}
	s := NewSampler(src, Options{History: time.Hour, Clock: func() time.Time { return now }})
	if _, err := s.Sample(); err != nil {
		t.Fatal(err)
	}
	s.Focus("h/bond0")
	if got := <-src.asked; got != "h/bond0" {
		t.Fatalf("asked for %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		ps := s.History().Since(Series{Bond: "h/bond0"}, time.Time{})
		if len(ps) == 2 && ps[0].Time.Equal(src.past) && ps[0].Value == 42 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history %+v: the past is not in front", ps)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Focus("")
	s.Focus("h/bond0")
	select {
	case b := <-src.asked:
		t.Errorf("asked again for %s", b)
	case <-time.After(100 * time.Millisecond):
	}
}
