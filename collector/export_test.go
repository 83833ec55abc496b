package collector

// What the external tests (package collector_test: the engine's tests
// that read through a Source package, which imports this one) need of the
// engine's insides.

// Observe reads the source between two snapshots, as Intervals does on a
// link notification.
func (s *Sampler) Observe() error { return s.observe() }

// BehindAfter is how many late ticks in a row make the Sampler say it is
// behind.
const BehindAfter = behindAfter
