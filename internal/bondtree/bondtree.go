// Package bondtree writes synthetic --root trees of many 802.3ad bonds
// (bond1..bondN, each over M slaves) for benchmarks and the many-bonds
// measurement: procfs in the shape a 6.x kernel shows root, the sysfs
// files the root source reads, and statistics counters that Advance moves
// on. It also names the files a tick reads, so a floor (a program that
// only opens and reads those files) can be measured beside bondtop.
package bondtree

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/rootdir"
)

// Tree is a generated root directory.
type Tree struct {
	Dir    string
	Bonds  []string
	Slaves map[string][]string
	tick   uint64
}

// BondName is the i-th bond's name (1-based).
func BondName(i int) string { return "bond" + strconv.Itoa(i) }

// Write creates bonds × slaves under dir (which must exist).
func Write(dir string, bonds, slaves int) (*Tree, error) {
	if bonds < 1 || slaves < 1 {
		return nil, fmt.Errorf("bondtree: need at least one bond and one slave (asked %d × %d)", bonds, slaves)
	}
	t := &Tree{Dir: dir, Slaves: map[string][]string{}}
	for i := 1; i <= bonds; i++ {
		name := BondName(i)
		t.Bonds = append(t.Bonds, name)
		for j := 1; j <= slaves; j++ {
			t.Slaves[name] = append(t.Slaves[name], fmt.Sprintf("b%ds%d", i, j))
		}
	}
	if err := t.write("sys/class/net/bonding_masters", strings.Join(t.Bonds, " ")+"\n"); err != nil {
		return nil, err
	}
	for i, b := range t.Bonds {
		sl := t.Slaves[b]
		files := map[string]string{
			"proc/net/bonding/" + b:                  procText(i+1, sl),
			"sys/class/net/" + b + "/bonding/mode":   "802.3ad 4\n",
			"sys/class/net/" + b + "/bonding/slaves": strings.Join(sl, " ") + "\n",
			"sys/class/net/" + b + "/mtu":            "1500\n",
			"sys/class/net/" + b + "/operstate":      "up\n",
		}
		for _, s := range sl {
			files["sys/class/net/"+s+"/bonding_slave/state"] = "active\n"
			files["sys/class/net/"+s+"/bonding_slave/mii_status"] = "up\n"
			files["sys/class/net/"+s+"/mtu"] = "1500\n"
		}
		for rel, content := range files {
			if err := t.write(rel, content); err != nil {
				return nil, err
			}
		}
	}
	return t, t.Advance()
}

// Advance moves every counter on by one tick's traffic: each slave of a
// bond carries a different share, so the diagnosis has something to weigh.
func (t *Tree) Advance() error {
	t.tick++
	for _, b := range t.Bonds {
		var rx, tx uint64
		for j, s := range t.Slaves[b] {
			r := t.tick * uint64(1+j) * 125_000
			x := t.tick * uint64(1+j) * 250_000
			rx, tx = rx+r, tx+x
			if err := t.counters(s, r, x); err != nil {
				return err
			}
		}
		if err := t.counters(b, rx, tx); err != nil {
			return err
		}
	}
	return nil
}

// TickFiles are the files the root source opens on a tick (the sysfs
// configuration aside, which it caches): the bond list, each bond's procfs
// file, and the statistics of every bond and slave.
func (t *Tree) TickFiles() []string {
	out := []string{filepath.Join(t.Dir, "sys/class/net/bonding_masters")}
	for _, b := range t.Bonds {
		out = append(out, filepath.Join(t.Dir, "proc/net/bonding", b))
		for _, ifname := range append([]string{b}, t.Slaves[b]...) {
			for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
				out = append(out, filepath.Join(t.Dir, "sys/class/net", ifname, "statistics", c.String()))
			}
		}
	}
	return out
}

func (t *Tree) counters(ifname string, rx, tx uint64) error {
	vals := map[bonding.Counter]uint64{
		bonding.RxBytes: rx, bonding.TxBytes: tx,
		bonding.RxPackets: rx / 1000, bonding.TxPackets: tx / 1000,
	}
	for c := bonding.Counter(0); c < bonding.NumCounters; c++ {
		if err := t.write("sys/class/net/"+ifname+"/statistics/"+c.String(), strconv.FormatUint(vals[c], 10)+"\n"); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tree) write(rel, content string) error {
	p := filepath.Join(t.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// procText is /proc/net/bonding/bondN of a healthy 802.3ad bond (fast
// LACP, every port in aggregator 1, partnered).
func procText(n int, slaves []string) string {
	sys := fmt.Sprintf("02:1d:22:%02x:%02x:01", n>>8&0xff, n&0xff)
	partner := fmt.Sprintf("02:fc:ce:%02x:%02x:01", n>>8&0xff, n&0xff)
	var b strings.Builder
	fmt.Fprintf(&b, `Ethernet Channel Bonding Driver: v6.1.0-18-amd64

Bonding Mode: IEEE 802.3ad Dynamic link aggregation
Transmit Hash Policy: layer3+4 (1)
MII Status: up
MII Polling Interval (ms): 100
Up Delay (ms): 0
Down Delay (ms): 0
Peer Notification Delay (ms): 0

802.3ad info
LACP active: on
LACP rate: fast
Min links: 0
Aggregator selection policy (ad_select): stable
System priority: 65535
System MAC address: %s
Active Aggregator Info:
	Aggregator ID: 1
	Number of ports: %d
	Actor Key: 15
	Partner Key: 15
	Partner Mac Address: %s
`, sys, len(slaves), partner)
	for j, s := range slaves {
		fmt.Fprintf(&b, `
Slave Interface: %s
MII Status: up
Speed: 10000 Mbps
Duplex: full
Link Failure Count: 0
Permanent HW addr: 02:%02x:%02x:00:00:%02x
Slave queue ID: 0
Aggregator ID: 1
Actor Churn State: monitoring
Partner Churn State: monitoring
Actor Churned Count: 0
Partner Churned Count: 0
details actor lacp pdu:
    system priority: 65535
    system mac address: %s
    port key: 15
    port priority: 255
    port number: %d
    port state: 63
details partner lacp pdu:
    system priority: 65535
    system mac address: %s
    oper key: 15
    port priority: 255
    port number: %d
    port state: 63
`, s, n>>8&0xff, n&0xff, j+1, sys, j+1, partner, j+1)
	}
	return b.String()
}

// MovingSource reads a written tree and moves its byte counters in memory
// on every Read, as Advance moves them on disk (slave j of a bond carries
// j+1 units, so shares are uneven), Step Advances a Read: thousands of
// ticks without rewriting the statistics files.
type MovingSource struct {
	*rootdir.Source
	Step uint64 // Advances per Read; 0 counts as 1
	tick uint64
}

// Read implements collector.Source.
func (m *MovingSource) Read() (collector.Reading, error) {
	r, err := m.Source.Read()
	m.tick += max(m.Step, 1)
	for i := range r.Bonds {
		b := &r.Bonds[i]
		var rx, tx uint64
		for j := range b.Slaves {
			sr, st := m.tick*uint64(j+1)*125_000, m.tick*uint64(j+1)*250_000
			b.Slaves[j].Counters.Set(bonding.RxBytes, sr)
			b.Slaves[j].Counters.Set(bonding.TxBytes, st)
			rx, tx = rx+sr, tx+st
		}
		b.Counters.Set(bonding.RxBytes, rx)
		b.Counters.Set(bonding.TxBytes, tx)
	}
	return r, err
}
