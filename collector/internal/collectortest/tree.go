package collectortest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bondtop/bondtop/bonding"
)

// tree is a fake host root (DIR/proc, DIR/sys) that tests write and change.
type tree struct {
	t   testing.TB
	dir string
}

func newTree(t testing.TB) *tree {
	t.Helper()
	return &tree{t: t, dir: t.TempDir()}
}

func (tr *tree) write(rel, content string) {
	tr.t.Helper()
	p := filepath.Join(tr.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *tree) remove(rel string) {
	tr.t.Helper()
	if err := os.RemoveAll(filepath.Join(tr.dir, rel)); err != nil {
		tr.t.Fatal(err)
	}
}

// counters writes every statistics file of ifname with base+offset.
func (tr *tree) counters(ifname string, rxBytes, txBytes uint64) {
	tr.t.Helper()
	vals := map[bonding.Counter]uint64{
		bonding.RxBytes: rxBytes, bonding.TxBytes: txBytes,
		bonding.RxPackets: rxBytes / 1000, bonding.TxPackets: txBytes / 1000,
	}
	for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
		tr.write("sys/class/net/"+ifname+"/statistics/"+c.String(), strconv.FormatUint(vals[c], 10)+"\n")
	}
}

// activeBackupTree writes an active-backup bond0 over eth0 (active) and
// eth1 in both procfs and sysfs, as a 6.x kernel shows it to root.
func activeBackupTree(t testing.TB) *tree {
	tr := newTree(t)
	tr.write("proc/net/bonding/bond0", activeBackupProc("eth0", "up", "up", 0))
	tr.write("sys/class/net/bonding_masters", "bond0\n")
	tr.write("sys/class/net/bond0/bonding/mode", "active-backup 1\n")
	tr.write("sys/class/net/bond0/bonding/slaves", "eth0 eth1\n")
	tr.write("sys/class/net/bond0/bonding/active_slave", "eth0\n")
	tr.write("sys/class/net/bond0/bonding/miimon", "100\n")
	tr.write("sys/class/net/bond0/mtu", "1500\n")
	tr.write("sys/class/net/bond0/operstate", "up\n")
	for _, s := range []string{"eth0", "eth1"} {
		state := "backup"
		if s == "eth0" {
			state = "active"
		}
		tr.write("sys/class/net/"+s+"/bonding_slave/state", state+"\n")
		tr.write("sys/class/net/"+s+"/bonding_slave/mii_status", "up\n")
		tr.write("sys/class/net/"+s+"/bonding_slave/link_failure_count", "0\n")
		tr.write("sys/class/net/"+s+"/bonding_slave/ad_aggregator_id", "N/A\n")
		tr.write("sys/class/net/"+s+"/mtu", "1500\n")
		tr.write("sys/class/net/"+s+"/speed", "1000\n")
		tr.write("sys/class/net/"+s+"/duplex", "full\n")
		tr.counters(s, 0, 0)
	}
	tr.counters("bond0", 0, 0)
	return tr
}

func activeBackupProc(active, mii0, mii1 string, failures int) string {
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
