// Package collectortest holds what the tests of the sampling engine
// (collector) and of its sources share: fake --root trees that tests
// write and change, a clock that moves only when told, and the
// allocation and heap checks behind the steady-tick budgets
// (docs/performance.md). It imports neither the engine nor a source, so
// the engine's own tests may use it too.
package collectortest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bondtop/bondtop/bonding"
)

// Tree is a fake host root (DIR/proc, DIR/sys) that tests write and
// change.
type Tree struct {
	t   testing.TB
	Dir string
}

// NewTree makes an empty tree in a temporary directory.
func NewTree(t testing.TB) *Tree {
	t.Helper()
	return &Tree{t: t, Dir: t.TempDir()}
}

// Write writes content to the file rel of the tree, making its
// directories.
func (tr *Tree) Write(rel, content string) {
	tr.t.Helper()
	p := filepath.Join(tr.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// Remove removes the file or directory rel of the tree.
func (tr *Tree) Remove(rel string) {
	tr.t.Helper()
	if err := os.RemoveAll(filepath.Join(tr.Dir, rel)); err != nil {
		tr.t.Fatal(err)
	}
}

// Counters writes every statistics file of ifname with base+offset.
func (tr *Tree) Counters(ifname string, rxBytes, txBytes uint64) {
	tr.t.Helper()
	vals := map[bonding.Counter]uint64{
		bonding.RxBytes: rxBytes, bonding.TxBytes: txBytes,
		bonding.RxPackets: rxBytes / 1000, bonding.TxPackets: txBytes / 1000,
	}
	for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
		tr.Write("sys/class/net/"+ifname+"/statistics/"+c.String(), strconv.FormatUint(vals[c], 10)+"\n")
	}
}

// ActiveBackupTree writes an active-backup bond0 over eth0 (active) and
// eth1 in both procfs and sysfs, as a 6.x kernel shows it to root.
func ActiveBackupTree(t testing.TB) *Tree {
	tr := NewTree(t)
	tr.Write("proc/net/bonding/bond0", ActiveBackupProc("eth0", "up", "up", 0))
	tr.Write("sys/class/net/bonding_masters", "bond0\n")
	tr.Write("sys/class/net/bond0/bonding/mode", "active-backup 1\n")
	tr.Write("sys/class/net/bond0/bonding/slaves", "eth0 eth1\n")
	tr.Write("sys/class/net/bond0/bonding/active_slave", "eth0\n")
	tr.Write("sys/class/net/bond0/bonding/miimon", "100\n")
	tr.Write("sys/class/net/bond0/mtu", "1500\n")
	tr.Write("sys/class/net/bond0/operstate", "up\n")
	for _, s := range []string{"eth0", "eth1"} {
		state := "backup"
		if s == "eth0" {
			state = "active"
		}
		tr.Write("sys/class/net/"+s+"/bonding_slave/state", state+"\n")
		tr.Write("sys/class/net/"+s+"/bonding_slave/mii_status", "up\n")
		tr.Write("sys/class/net/"+s+"/bonding_slave/link_failure_count", "0\n")
		tr.Write("sys/class/net/"+s+"/bonding_slave/ad_aggregator_id", "N/A\n")
		tr.Write("sys/class/net/"+s+"/mtu", "1500\n")
		tr.Write("sys/class/net/"+s+"/speed", "1000\n")
		tr.Write("sys/class/net/"+s+"/duplex", "full\n")
		tr.Counters(s, 0, 0)
	}
	tr.Counters("bond0", 0, 0)
	return tr
}

// ActiveBackupProc is bond0's /proc/net/bonding text in ActiveBackupTree,
// with active the active slave, mii0 and mii1 the slaves' MII status and
// failures eth0's link failure count.
func ActiveBackupProc(active, mii0, mii1 string, failures int) string {
	return `Ethernet Channel Bonding Driver: v6.8.0

Bonding Mode: fault-tolerance (active-backup)
Primary Slave: None
Currently Active Slave: ` + active + `
MII Status: up
MII Polling Interval (ms): 100
Up Delay (ms): 0
Down Delay (ms): 0
Peer Notification Delay (ms): 0

Slave Interface: eth0
MII Status: ` + mii0 + `
Speed: 1000 Mbps
Duplex: full
Link Failure Count: ` + strconv.Itoa(failures) + `
Permanent HW addr: 52:54:00:00:00:01
Slave queue ID: 0

Slave Interface: eth1
MII Status: ` + mii1 + `
Speed: 1000 Mbps
Duplex: full
Link Failure Count: 0
Permanent HW addr: 52:54:00:00:00:02
Slave queue ID: 0
`
}

// FourSlaveTree writes an 802.3ad bond0 over e1..e4: procfs from the
// healthy 6.8 capture, sysfs, and statistics files.
func FourSlaveTree(tb testing.TB) *Tree {
	tr := NewTree(tb)
	proc, err := os.ReadFile(filepath.Join(moduleRoot(tb), "bonding/testdata/proc/8023ad-6.8-healthy-root.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	tr.Write("proc/net/bonding/bond0", string(proc))
	tr.Write("sys/class/net/bonding_masters", "bond0\n")
	tr.Write("sys/class/net/bond0/bonding/mode", "802.3ad 4\n")
	tr.Write("sys/class/net/bond0/bonding/slaves", "e1 e2 e3 e4\n")
	tr.Counters("bond0", 1, 1)
	for _, s := range []string{"e1", "e2", "e3", "e4"} {
		tr.Write("sys/class/net/"+s+"/bonding_slave/state", "active\n")
		tr.Write("sys/class/net/"+s+"/bonding_slave/mii_status", "up\n")
		tr.Write("sys/class/net/"+s+"/mtu", "1500\n")
		tr.Counters(s, 1, 1)
	}
	return tr
}

// moduleRoot is the directory of go.mod above the test's working
// directory: the package's own, wherever it sits in the module.
func moduleRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			tb.Fatal("no go.mod above the working directory")
		}
		dir = up
	}
}
