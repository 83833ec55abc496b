package collectortest

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/bondtop/bondtop/model"
)

// Clock moves only when told, so rates come out exact.
type Clock struct{ now time.Time }

// NewClock is a Clock that reads t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time { return c.now }

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) { c.now = t }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.now = c.now.Add(d) }

// A Sampler takes one snapshot (collector.Sampler).
type Sampler interface {
	Sample() (*model.Snapshot, error)
}

// MustSample takes a snapshot, failing the test when that fails.
func MustSample(t testing.TB, s Sampler) *model.Snapshot {
	t.Helper()
	snap, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// JSONOf is v in JSON, failing the test when it has none.
func JSONOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Approx fails the test unless got is want, to a part in a billion.
func Approx(t testing.TB, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil, want %v", what, want)
	}
	if math.Abs(*got-want) > want*1e-9+1e-9 {
		t.Fatalf("%s = %v, want %v", what, *got, want)
	}
}
