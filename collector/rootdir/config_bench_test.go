package rootdir

import (
	"testing"
)

// BenchmarkReadConfig is one configuration refresh (every 5 s): a
// 4-slave 802.3ad bond's sysfs options, MAC and devices, and the host's
// ifcfg files (a real kernel's tree with an etc/ beside it).
func BenchmarkReadConfig(b *testing.B) {
	src, err := New("../../testdata/lab/Drift_ifcfg")
	if err != nil {
		b.Fatal(err)
	}
	r, err := src.Read()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		hc := src.ReadConfig(r.Bonds)
		if len(hc.Intent.Bonds) != 1 || len(hc.Running["bond0"].Options) < 30 {
			b.Fatalf("read %d bonds, %d options", len(hc.Intent.Bonds), len(hc.Running["bond0"].Options))
		}
	}
}
