// Package testtree writes fake host roots for tests: DIR/proc and DIR/sys
// as bondtop's --root reads them (collector/rootdir), with files a test
// writes, changes and removes while a Sampler or the real binary reads
// them. It is the one writer of such trees; the ready-made bonds below
// are the ones several packages' tests start from.
package testtree

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bondtop/bondtop/bonding"
)

// Tree is a fake host root that tests write and change.
type Tree struct {
	tb  testing.TB
	Dir string
	// BytesPerPacket turns the byte counters Counters writes into packet
	// counters; 1000 unless a test sets it.
	BytesPerPacket uint64
	// Atomic replaces each file whole (a new file renamed over the old),
	// for a tree another process reads while the test writes it: such a
	// reader then never sees half a value, as the kernel's files never
	// show one. Otherwise a file is rewritten in place, as sysfs's are,
	// which is what the sources' kept descriptors are built for.
	Atomic bool
	// dirs are the directories made and counted the interfaces whose
	// counters were written once, so a test that samples a tree a
	// hundred times does not cost thousands of syscalls.
	dirs, counted map[string]bool
}

// New makes an empty tree in a temporary directory.
func New(tb testing.TB) *Tree {
	return At(tb, tb.TempDir())
}

// At is a tree in dir, which may hold files already.
func At(tb testing.TB, dir string) *Tree {
	return &Tree{tb: tb, Dir: dir, BytesPerPacket: 1000, dirs: map[string]bool{}, counted: map[string]bool{}}
}

// Write writes content to the file rel of the tree, making its
// directories (see Atomic for how).
func (tr *Tree) Write(rel, content string) {
	tr.tb.Helper()
	p := filepath.Join(tr.Dir, rel)
	if dir := filepath.Dir(p); !tr.dirs[dir] {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tr.tb.Fatal(err)
		}
		tr.dirs[dir] = true
	}
	if !tr.Atomic {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tr.tb.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(p+".tmp", []byte(content), 0o644); err != nil {
		tr.tb.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		tr.tb.Fatal(err)
	}
}

// Remove removes the file or directory rel of the tree.
func (tr *Tree) Remove(rel string) {
	tr.tb.Helper()
	if err := os.RemoveAll(filepath.Join(tr.Dir, rel)); err != nil {
		tr.tb.Fatal(err)
	}
	clear(tr.dirs) // the directories under rel are gone too
}

// Counters writes ifname's byte and packet counters; the first time, its
// other statistics files (errors, drops) too, as zero.
func (tr *Tree) Counters(ifname string, rxBytes, txBytes uint64) {
	tr.tb.Helper()
	vals := map[bonding.Counter]uint64{
		bonding.RxBytes: rxBytes, bonding.TxBytes: txBytes,
		bonding.RxPackets: rxBytes / tr.BytesPerPacket, bonding.TxPackets: txBytes / tr.BytesPerPacket,
	}
	first := !tr.counted[ifname]
	tr.counted[ifname] = true
	for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
		if v, moving := vals[c]; moving || first {
			tr.Write("sys/class/net/"+ifname+"/statistics/"+c.String(), strconv.FormatUint(v, 10)+"\n")
		}
	}
}

// ActiveBackup writes an active-backup bond0 over eth0 (active) and eth1
// in both procfs and sysfs, as a 6.x kernel shows it to root.
func ActiveBackup(tb testing.TB) *Tree {
	tr := New(tb)
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

// ActiveBackupProc is bond0's /proc/net/bonding text in ActiveBackup,
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

// FourSlave writes an 802.3ad bond0 over e1..e4: procfs from the healthy
// 6.8 capture, sysfs, and statistics files.
func FourSlave(tb testing.TB) *Tree {
	tr := New(tb)
	tr.ProcFile("bond0", "8023ad-6.8-healthy-root.txt")
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

// ProcFile installs a real capture as /proc/net/bonding/<bond>: a file
// of bonding/testdata/proc, the kernel captures the parser is held to.
func (tr *Tree) ProcFile(bond, capture string) {
	tr.tb.Helper()
	data, err := os.ReadFile(filepath.Join(ModuleRoot(tr.tb), "bonding", "testdata", "proc", capture))
	if err != nil {
		tr.tb.Fatal(err)
	}
	tr.Write("proc/net/bonding/"+bond, string(data))
}

// ModuleRoot is the directory of go.mod above the test's working
// directory: the package's own, wherever it sits in the module.
func ModuleRoot(tb testing.TB) string {
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
