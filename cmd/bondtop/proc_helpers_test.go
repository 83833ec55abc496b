package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeNetDev replaces proc/net/dev with the given rx, tx byte counters.
func writeNetDev(t *testing.T, dir string, bytes map[string][2]uint64) {
	var b strings.Builder
	b.WriteString("Inter-|   Receive                                                |  Transmit\n")
	b.WriteString(" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n")
	for _, ifname := range []string{"bond0", "e1", "e2", "e3", "e4"} {
		c := bytes[ifname]
		fmt.Fprintf(&b, "%6s: %d %d 0 0 0 0 0 0 %d %d 0 0 0 0 0 0\n", ifname, c[0], c[0]/1500, c[1], c[1]/1500)
	}
	p := filepath.Join(dir, "proc/net/dev")
	if err := os.WriteFile(p+".tmp", []byte(b.String()), 0o644); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Error(err)
	}
}

// readMemory is VmRSS and VmHWM of pid in kB.
func readMemory(pid string) (rss, hwm int64, err error) {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v
		case "VmHWM:":
			hwm = v
		}
	}
	return rss, hwm, nil
}

// writeStat sets an interface's byte counters (packets too when all is
// set), each file replaced whole (rename) as the kernel's never show half
// a value.
func writeStat(t *testing.T, dir, ifname string, rx, tx uint64, all bool) {
	values := map[string]uint64{"rx_bytes": rx, "tx_bytes": tx}
	if all {
		values["rx_packets"], values["tx_packets"] = rx/1500, tx/1500
	}
	for name, v := range values {
		p := filepath.Join(dir, "sys/class/net", ifname, "statistics", name)
		if all {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Error(err)
				return
			}
		}
		if err := os.WriteFile(p+".tmp", []byte(strconv.FormatUint(v, 10)+"\n"), 0o644); err != nil {
			t.Error(err)
			return
		}
		if err := os.Rename(p+".tmp", p); err != nil {
			t.Error(err)
		}
	}
}
