package ui

import (
	"math"
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

// host is a fake host root (internal/testtree) whose counters a test
// moves forward, sampled by a real Sampler on a fake clock: the screens
// are built from the same Snapshots the live dashboard gets, and the time
// on them is always the same.
type host struct {
	*testtree.Tree
	t       *testing.T
	now     time.Time
	sampler *collector.Sampler
	// bytes are the cumulative rx, tx counters per interface.
	bytes map[string][2]uint64
	snaps []*model.Snapshot
}

// start is the fake clock's first reading: the screens show 12:00:00 on.
var start = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func newHost(t *testing.T) *host {
	t.Helper()
	return &host{Tree: testtree.New(t), t: t, now: start, bytes: map[string][2]uint64{}}
}

// procFile installs a /proc/net/bonding file: a kernel capture of
// bonding/testdata/proc, or one of ui/testdata/proc made for a screen.
func (h *host) procFile(bond, file string) {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "proc", file))
	if os.IsNotExist(err) {
		h.ProcFile(bond, file)
		return
	}
	if err != nil {
		h.t.Fatal(err)
	}
	h.Write("proc/net/bonding/"+bond, string(data))
}

// open starts the sampler (after the tree is written) and takes the first
// sample.
func (h *host) open(interval time.Duration, bonds ...string) {
	h.t.Helper()
	src, err := rootdir.New(h.Dir)
	if err != nil {
		h.t.Fatal(err)
	}
	h.sampler = collector.NewSampler(src, collector.Options{
		Interval: interval, Bonds: bonds, Clock: func() time.Time { return h.now },
	})
	h.sample(0)
}

// traffic adds rx, tx bit rates over d to each interface's counters.
func (h *host) traffic(d time.Duration, rates map[string][2]float64) {
	for ifname, r := range rates {
		c := h.bytes[ifname]
		c[0] += uint64(r[0] * d.Seconds() / 8)
		c[1] += uint64(r[1] * d.Seconds() / 8)
		h.bytes[ifname] = c
	}
	for ifname, c := range h.bytes {
		h.Counters(ifname, c[0], c[1])
	}
}

// sample advances the clock by d and samples.
func (h *host) sample(d time.Duration) *model.Snapshot {
	h.t.Helper()
	h.now = h.now.Add(d)
	s, err := h.sampler.Sample()
	if err != nil {
		h.t.Fatal(err)
	}
	h.snaps = append(h.snaps, s)
	return s
}

// wave is a deterministic, lively traffic shape: base plus a slow swing.
func wave(base, swing float64, step, period int, phase float64) float64 {
	return base + swing*math.Sin(2*math.Pi*float64(step)/float64(period)+phase)
}

// lacpHost is 802.3ad bond0 over e1..e4 (10G each); proc is the procfs
// file; carry says which slaves carry traffic. It runs 90 s of traffic.
func lacpHost(t *testing.T, proc string, carry []string) *host {
	h := newHost(t)
	h.procFile("bond0", proc)
	h.Write("sys/class/net/bonding_masters", "bond0\n")
	for _, ifname := range []string{"bond0", "e1", "e2", "e3", "e4"} {
		h.bytes[ifname] = [2]uint64{}
	}
	h.traffic(0, nil)
	h.open(time.Second)
	for step := 1; step <= 90; step++ {
		rates := map[string][2]float64{}
		var sumRx, sumTx float64
		for i, s := range carry {
			rx := wave(2.0e9+float64(i)*0.6e9, 0.8e9, step, 40, float64(i))
			tx := wave(1.2e9+float64(i)*0.9e9, 0.5e9, step, 25, float64(i)*2)
			rates[s] = [2]float64{rx, tx}
			sumRx += rx
			sumTx += tx
		}
		rates["bond0"] = [2]float64{sumRx, sumTx}
		h.traffic(time.Second, rates)
		h.sample(time.Second)
	}
	return h
}

// activeBackupProc is bond0 in active-backup over eth0 and eth1, eth0
// its primary.
func activeBackupProc(active, mii0 string, failures0 int) string {
	return strings.Replace(testtree.ActiveBackupProc(active, mii0, "up", failures0),
		"Primary Slave: None", "Primary Slave: eth0 (primary_reselect always)", 1)
}

// failoverHost is active-backup bond0: eth0 carries ~800 Mbit/s for 45 s,
// then its link goes down and eth1 takes over for 15 s.
func failoverHost(t *testing.T) *host {
	h := newHost(t)
	h.Write("proc/net/bonding/bond0", activeBackupProc("eth0", "up", 0))
	h.Write("sys/class/net/bonding_masters", "bond0\n")
	for _, ifname := range []string{"bond0", "eth0", "eth1"} {
		h.bytes[ifname] = [2]uint64{}
	}
	h.traffic(0, nil)
	h.open(time.Second)
	for step := 1; step <= 60; step++ {
		active := "eth0"
		if step > 45 {
			active = "eth1"
		}
		if step == 46 {
			h.Write("proc/net/bonding/bond0", activeBackupProc("eth1", "down", 1))
		}
		rx := wave(600e6, 150e6, step, 20, 0)
		tx := wave(750e6, 100e6, step, 15, 1)
		h.traffic(time.Second, map[string][2]float64{active: {rx, tx}, "bond0": {rx, tx}})
		h.sample(time.Second)
	}
	return h
}
