// Package collectortest holds what the tests of the sampling engine
// (collector) and of its sources share: a clock that moves only when
// told, sample and JSON helpers, made-up flows and sockets, and the
// allocation and heap checks behind the steady-tick budgets
// (docs/performance.md). Fake --root trees come from internal/testtree.
// It imports neither the engine nor a source, so the engine's own tests
// may use it too.
package collectortest
