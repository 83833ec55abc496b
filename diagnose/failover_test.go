package diagnose

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/internal/testtree"
	"github.com/bondtop/bondtop/model"
)

// labTree copies testdata/lab/NAME (a real kernel's procfs and sysfs)
// into a temporary directory the test may change.
func labTree(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "testdata", "lab", name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// editProc replaces a line of bond0's procfs file (it must be there).
func editProc(t *testing.T, dir, old, new string) {
	t.Helper()
	p := filepath.Join(dir, "proc/net/bonding/bond0")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("procfs has no %q", old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pciDevice links sys/class/net/IF/device to a PCI function under
// sys/devices, as sysfs does; a VF gets a physfn link to its PF.
func pciDevice(t *testing.T, dir, ifname, pci, physfn string) {
	t.Helper()
	dev := filepath.Join(dir, "sys/devices/pci0000:00", pci)
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	if physfn != "" {
		if err := os.Symlink("../"+physfn, filepath.Join(dev, "physfn")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../../../devices/pci0000:00/"+pci, filepath.Join(dir, "sys/class/net", ifname, "device")); err != nil {
		t.Fatal(err)
	}
}

const bondDir = "sys/class/net/bond0/bonding/"

// arpMonitor turns a tree's bond from miimon to the ARP monitor, with
// the given targets, in sysfs and procfs alike.
func arpMonitor(t *testing.T, dir, targets string) {
	testtree.At(t, dir).Write(bondDir+"miimon", "0\n")
	testtree.At(t, dir).Write(bondDir+"arp_interval", "1000\n")
	testtree.At(t, dir).Write(bondDir+"arp_ip_target", targets+"\n")
	editProc(t, dir, "MII Polling Interval (ms): 100\n", "MII Polling Interval (ms): 0\n")
	editProc(t, dir, "Up Delay (ms)", "ARP Polling Interval (ms): 1000\nARP Missed Max: 2\nARP IP target/s (n.n.n.n form): "+strings.ReplaceAll(targets, " ", ",")+"\nUp Delay (ms)")
}

// netplanAB configures ActiveBackupFailover's bond in netplan, with its
// updelay.
func netplanAB(updelay string) string {
	return `network:
  version: 2
  ethernets: {dut0: {}, dut1: {}}
  bonds:
    bond0:
      interfaces: [dut0, dut1]
      parameters:
        mode: active-backup
        mii-monitor-interval: 100
        primary: dut0
        up-delay: ` + updelay + "\n"
}

// TestFailoverFindings: for each finding, a real kernel's tree changed
// the way a host that has the trouble would be, and one just on the right
// side of it; the finding must be there in the first and absent in the
// second.
func TestFailoverFindings(t *testing.T) {
	for _, tc := range []struct {
		id, tree    string
		bad, good   func(t *testing.T, dir string)
		wantInBoth  []string // findings both trees must have (context)
		wantMessage string   // part of the bad tree's message
	}{
		{id: IDNoLinkMonitor, tree: "Modes_balance-rr",
			bad: func(t *testing.T, dir string) {
				testtree.At(t, dir).Write(bondDir+"miimon", "0\n")
				editProc(t, dir, "MII Polling Interval (ms): 100\n", "MII Polling Interval (ms): 0\n")
			},
			good:        func(t *testing.T, dir string) {},
			wantMessage: "miimon 0 and arp_interval 0"},
		{id: IDARPNoTargets, tree: "ActiveBackupFailover",
			bad:         func(t *testing.T, dir string) { arpMonitor(t, dir, "") },
			good:        func(t *testing.T, dir string) { arpMonitor(t, dir, "10.0.0.1") },
			wantMessage: "no arp_ip_target"},
		{id: IDARPValidateNone, tree: "ActiveBackupFailover",
			bad: func(t *testing.T, dir string) { arpMonitor(t, dir, "10.0.0.1 10.0.0.2") },
			good: func(t *testing.T, dir string) {
				arpMonitor(t, dir, "10.0.0.1 10.0.0.2")
				testtree.At(t, dir).Write(bondDir+"arp_validate", "active 1\n")
			},
			wantMessage: "arp_validate none"},
		{id: IDDelayRounded, tree: "ActiveBackupFailover",
			bad: func(t *testing.T, dir string) {
				testtree.At(t, dir).Write("etc/netplan/01-bond.yaml", netplanAB("250"))
				testtree.At(t, dir).Write(bondDir+"updelay", "200\n")
			},
			good: func(t *testing.T, dir string) {
				testtree.At(t, dir).Write("etc/netplan/01-bond.yaml", netplanAB("200"))
				testtree.At(t, dir).Write(bondDir+"updelay", "200\n")
			},
			wantMessage: "updelay 250 ms runs as 200 ms (/etc/netplan/01-bond.yaml:11)"},
		{id: IDFailbackNoUpdelay, tree: "ActiveBackupFailover",
			bad: func(t *testing.T, dir string) {},
			good: func(t *testing.T, dir string) {
				testtree.At(t, dir).Write(bondDir+"updelay", "30000\n")
				editProc(t, dir, "Up Delay (ms): 0", "Up Delay (ms): 30000")
			},
			wantMessage: "primary dut0 with primary_reselect always and updelay 0"},
		{id: IDNoGratARP, tree: "ActiveBackupFailover",
			bad: func(t *testing.T, dir string) {
				testtree.At(t, dir).Write(bondDir+"num_grat_arp", "0\n")
				testtree.At(t, dir).Write(bondDir+"num_unsol_na", "0\n")
			},
			good:        func(t *testing.T, dir string) {},
			wantMessage: "num_grat_arp 0"},
		{id: IDFailOverMACNeeded, tree: "ActiveBackupFailover",
			bad: func(t *testing.T, dir string) {
				pciDevice(t, dir, "dut0", "0000:3b:02.0", "0000:3b:00.0")
				pciDevice(t, dir, "dut1", "0000:5e:02.0", "0000:5e:00.0")
			},
			good: func(t *testing.T, dir string) {
				pciDevice(t, dir, "dut0", "0000:3b:02.0", "0000:3b:00.0")
				pciDevice(t, dir, "dut1", "0000:5e:02.0", "0000:5e:00.0")
				testtree.At(t, dir).Write(bondDir+"fail_over_mac", "active 1\n")
			},
			wantMessage: "SR-IOV VFs (dut0, dut1) with fail_over_mac none"},
		{id: IDSharedFate, tree: "LACP_slaves-2",
			bad: func(t *testing.T, dir string) {
				pciDevice(t, dir, "dut0", "0000:3b:00.0", "")
				pciDevice(t, dir, "dut1", "0000:3b:00.1", "")
			},
			good: func(t *testing.T, dir string) {
				pciDevice(t, dir, "dut0", "0000:3b:00.0", "")
				pciDevice(t, dir, "dut1", "0000:5e:00.0", "")
			},
			wantMessage: "not redundant: every slave is on one adapter (dut0, dut1 on PCI 0000:3b:00)"},
		{id: IDSharedFate + "/vfs", tree: "ActiveBackupFailover",
			bad: func(t *testing.T, dir string) {
				pciDevice(t, dir, "dut0", "0000:3b:02.0", "0000:3b:00.0")
				pciDevice(t, dir, "dut1", "0000:3b:02.1", "0000:3b:00.0")
			},
			good: func(t *testing.T, dir string) {
				pciDevice(t, dir, "dut0", "0000:3b:02.0", "0000:3b:00.0")
				// PF 0000:3b:00.1 would be the same card as 3b:00.0.
				pciDevice(t, dir, "dut1", "0000:5e:0a.0", "0000:5e:00.0")
			},
			wantMessage: "dut0, dut1 on PCI 0000:3b:00"},
		{id: IDLACPRateSlow, tree: "LACP_slaves-2",
			bad: func(t *testing.T, dir string) {
				testtree.At(t, dir).Write(bondDir+"lacp_rate", "slow 0\n")
				editProc(t, dir, "LACP rate: fast", "LACP rate: slow")
			},
			good:        func(t *testing.T, dir string) {},
			wantMessage: "lacp_rate slow"},
		{id: IDConfigUnknown, tree: "Modes_broadcast",
			bad: func(t *testing.T, dir string) { testtree.At(t, dir).Write("etc/hostname", "h\n") },
			good: func(t *testing.T, dir string) {
				testtree.At(t, dir).Write("etc/network/interfaces", "iface bond0 inet manual\n  bond-slaves dut0 dut1\n  bond-mode broadcast\n  bond-miimon 100\n")
			},
			wantMessage: "bond0 is in no configuration file"},
		{id: IDConfigDrift, tree: "Modes_broadcast",
			bad: func(t *testing.T, dir string) {
				testtree.At(t, dir).Write("etc/network/interfaces", "iface bond0 inet manual\n  bond-slaves dut0 dut1\n  bond-mode broadcast\n  bond-miimon 100\n  bond-updelay 200\n")
			},
			good: func(t *testing.T, dir string) {
				testtree.At(t, dir).Write("etc/network/interfaces", "iface bond0 inet manual\n  bond-slaves dut0 dut1\n  bond-mode broadcast\n  bond-miimon 100\n  bond-updelay 0\n")
			},
			wantMessage: "updelay 0, configured 200"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			id, _, _ := strings.Cut(tc.id, "/")
			bad, good := labTree(t, tc.tree), labTree(t, tc.tree)
			tc.bad(t, bad)
			tc.good(t, good)
			fb := treeFindings(t, bad)
			f := find(fb, id)
			if f == nil {
				t.Fatalf("no %s in %v", id, ids(fb))
			}
			if !strings.Contains(f.Message, tc.wantMessage) {
				t.Errorf("message %q, want it to say %q", f.Message, tc.wantMessage)
			}
			if f.Detail == "" || !strings.ContainsAny(f.Detail, ".") {
				t.Errorf("no detail: %+v", f)
			}
			if fg := treeFindings(t, good); find(fg, id) != nil {
				t.Errorf("%s on the right side: %+v", id, *find(fg, id))
			}
		})
	}
}

// treeFindings samples a tree once with the analyzer.
func treeFindings(t *testing.T, dir string) []Finding {
	t.Helper()
	src, err := rootdir.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := collector.NewSampler(src, collector.Options{Analyze: NewWindow(time.Minute).Fill}).Sample()
	if err != nil {
		t.Fatal(err)
	}
	return snap.Bonds[0].Findings
}

// TestIdentityChanges: the bond's MAC (sysfs, re-read every few seconds)
// and its LACP system MAC (every tick) changing during a run give an
// event and a finding that stays after the window has moved on; a run
// without a change has neither.
func TestIdentityChanges(t *testing.T) {
	for _, tc := range []struct {
		id     string
		kind   model.EventKind
		change func(t *testing.T, dir string)
	}{
		{IDBondMACChanged, model.EventBondMAC, func(t *testing.T, dir string) {
			testtree.At(t, dir).Write("sys/class/net/bond0/address", "02:00:00:00:00:99\n")
		}},
		{IDLACPSystemChanged, model.EventLACPSystem, func(t *testing.T, dir string) {
			editProc(t, dir, "System MAC address: ba:2f:79:00:71:94", "System MAC address: 02:00:00:00:00:99")
		}},
	} {
		for _, changed := range []bool{true, false} {
			dir := labTree(t, "LACP_slaves-2")
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			src, err := rootdir.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			s := collector.NewSampler(src, collector.Options{Analyze: NewWindow(10 * time.Second).Fill, Clock: func() time.Time { return now }})
			var events []model.Event
			var last *model.Snapshot
			for i := range 30 {
				if i == 3 && changed {
					tc.change(t, dir)
				}
				now = now.Add(time.Second)
				snap, err := s.Sample()
				if err != nil {
					t.Fatal(err)
				}
				events = append(events, snap.Events...)
				last = snap
			}
			var kinds []model.EventKind
			for _, e := range events {
				kinds = append(kinds, e.Kind)
			}
			has := false
			for _, k := range kinds {
				has = has || k == tc.kind
			}
			f := find(last.Bonds[0].Findings, tc.id)
			if changed && (!has || f == nil || !strings.Contains(f.Message, "02:00:00:00:00:99")) {
				t.Errorf("%s: events %v, finding %+v 27 s after the change", tc.id, kinds, f)
			}
			if !changed && (has || f != nil) {
				t.Errorf("%s without a change: events %v, finding %+v", tc.id, kinds, f)
			}
		}
	}
}

// TestConfigUnknownUnreadable: when some configuration files could not be
// read, a bond found in none of the others may be defined there: the
// finding says so and is information, not a warning.
func TestConfigUnknownUnreadable(t *testing.T) {
	dir := labTree(t, "Modes_broadcast")
	testtree.At(t, dir).Write("etc/hostname", "h\n")
	src, err := rootdir.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := collector.NewSampler(src, collector.Options{}).Sample()
	if err != nil {
		t.Fatal(err)
	}
	for _, notes := range [][]string{nil, {"/etc/NetworkManager/system-connections/b.nmconnection: not read (permission denied)"}} {
		cfg := *snap.Config
		cfg.Intent.Notes = notes
		s := *snap
		s.Config = &cfg
		f := find(Analyze([]*model.Snapshot{&s})["bond0"], IDConfigUnknown)
		switch {
		case f == nil:
			t.Fatalf("notes %q: no %s", notes, IDConfigUnknown)
		case notes == nil && (f.Severity != Warning || strings.Contains(f.Message, "not readable")):
			t.Errorf("all files read: %+v", *f)
		case notes != nil && (f.Severity != Info || !strings.Contains(f.Message, "1 not readable")):
			t.Errorf("one file unreadable: %+v", *f)
		}
	}
}
