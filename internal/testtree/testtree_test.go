package testtree

import (
	"os"
	"path/filepath"
	"testing"
)

func read(t *testing.T, tr *Tree, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tr.Dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Counters moves bytes and packets every time and writes the other
// statistics once, so an error count a test set stays.
func TestCounters(t *testing.T) {
	tr := New(t)
	tr.Counters("eth0", 3000, 5000)
	if got := read(t, tr, "sys/class/net/eth0/statistics/rx_errors"); got != "0\n" {
		t.Errorf("rx_errors %q after the first write, want 0", got)
	}
	tr.Write("sys/class/net/eth0/statistics/rx_errors", "7\n")
	tr.BytesPerPacket = 500
	tr.Counters("eth0", 4000, 6000)
	for rel, want := range map[string]string{"rx_errors": "7\n", "rx_bytes": "4000\n", "tx_packets": "12\n"} {
		if got := read(t, tr, "sys/class/net/eth0/statistics/"+rel); got != want {
			t.Errorf("%s %q, want %q", rel, got, want)
		}
	}
}

// An atomic tree leaves no temporary file; a removed directory is made
// again on the next write under it.
func TestAtomicAndRemove(t *testing.T) {
	tr := New(t)
	tr.Atomic = true
	tr.Write("proc/net/bonding/bond0", "one\n")
	tr.Write("proc/net/bonding/bond0", "two\n")
	if got := read(t, tr, "proc/net/bonding/bond0"); got != "two\n" {
		t.Errorf("bond0 %q, want two", got)
	}
	if _, err := os.Stat(filepath.Join(tr.Dir, "proc/net/bonding/bond0.tmp")); !os.IsNotExist(err) {
		t.Errorf("a temporary file is left: %v", err)
	}
	tr.Remove("proc")
	tr.Write("proc/net/bonding/bond1", "three\n")
	if got := read(t, tr, "proc/net/bonding/bond1"); got != "three\n" {
		t.Errorf("bond1 %q after the remove, want three", got)
	}
}

// The ready-made bonds are what the sources' tests start from: their
// files are where the root source looks.
func TestReadyMade(t *testing.T) {
	ab := ActiveBackup(t)
	if got := read(t, ab, "sys/class/net/bond0/bonding/active_slave"); got != "eth0\n" {
		t.Errorf("active-backup: active_slave %q", got)
	}
	fs := FourSlave(t)
	if got := read(t, fs, "sys/class/net/bond0/bonding/slaves"); got != "e1 e2 e3 e4\n" {
		t.Errorf("four slaves: slaves %q", got)
	}
	if got := read(t, fs, "proc/net/bonding/bond0"); len(got) < 100 {
		t.Errorf("four slaves: procfs %q is not the capture", got)
	}
}
