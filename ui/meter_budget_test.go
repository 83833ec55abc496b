package ui

import (
	"testing"

	"github.com/bondtop/bondtop/model"
)

// Above its budget the eBPF meter counts 1 in N: the title and the status
// line say N, as for the sampled meter.
func TestMeterSourceOverBudget(t *testing.T) {
	for _, tc := range []struct {
		source       string
		rate         int
		title, state string
	}{
		{"ebpf", 1, "ebpf", "meter ebpf 3/64k"},
		{"ebpf", 20, "ebpf 1:20 over budget (~ estimates)", "meter ebpf 1:20 3/64k"},
		{"sampled", 100, "sampled 1:100 (estimates)", "meter 1:100 3/64k"},
	} {
		m := &model.MeasuredTraffic{Source: tc.source, SampleRate: tc.rate, MapEntries: 3, MapSize: 65536}
		if got := meterSource(m); got != tc.title {
			t.Errorf("%s 1:%d: title %q, want %q", tc.source, tc.rate, got, tc.title)
		}
		if got := meterStatus(&model.BondSample{Measured: m}); got != tc.state {
			t.Errorf("%s 1:%d: status %q, want %q", tc.source, tc.rate, got, tc.state)
		}
	}
}
