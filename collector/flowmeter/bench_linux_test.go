//go:build linux

package flowmeter

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fillMap puts n flows of one slave (ifindex 1) into a fresh meter's map
// from user space, seen just now: what the kernel would hold after n
// flows crossed the slave.
func fillMap(b *testing.B, n int) *ebpfMeter {
	b.Helper()
	needRoot(b)
	m, err := openEBPF(Options{MaxFlows: n, IdleTimeout: DefaultIdleTimeout, SampleRate: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	m.slaves[1] = &attachment{ifindex: 1, name: "bench0"}
	keys := make([]meterFlow4Key, n)
	vals := make([]meterFlowCounters, n)
	now := bootNanos()
	for i := range keys {
		k := &keys[i]
		k.Ifindex, k.Proto, k.Flags = 1, 6, keyIP
		k.Src = [4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}
		k.Dst = [4]byte{10, 255, 0, 1}
		k.Sport, k.Dport = uint16(i), 443
		vals[i] = meterFlowCounters{Bytes: uint64(i * 1000), Packets: uint64(i), FirstSeen: now, LastSeen: now}
	}
	if _, err := m.objs.Flows4.BatchUpdate(keys, vals, nil); err != nil {
		b.Fatal(err)
	}
	return m
}

// memlock is the kernel's account of a map's memory (/proc/self/fdinfo).
func memlock(b *testing.B, fd int) int {
	b.Helper()
	s, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(line, "memlock:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	b.Fatal("no memlock in fdinfo")
	return 0
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime(b *testing.B) (user, sys time.Duration) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// One refresh: read every flow and rank them by bytes (an index sort: a
// Flow is 248 bytes, too big to move around), as the flows view does.
// Reports user and system CPU per refresh (ns/op is wall time, which a
// busy machine inflates), the kernel's memory per flow and the reading's.
func BenchmarkReadAndRank(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("flows=%d", n), func(b *testing.B) {
			empty := fillMapEmpty(b, n)
			m := fillMap(b, n)
			kernel := memlock(b, m.objs.Flows4.FD()) - empty
			b.ReportAllocs()
			b.ResetTimer()
			u0, s0 := cpuTime(b)
			for range b.N {
				r, err := m.Read()
				if err != nil {
					b.Fatal(err)
				}
				if len(r.Flows) != n {
					b.Fatalf("read %d flows, want %d", len(r.Flows), n)
				}
				rank := make([]int32, len(r.Flows))
				for i := range rank {
					rank[i] = int32(i)
				}
				slices.SortFunc(rank, func(i, j int32) int { return cmp.Compare(r.Flows[j].Bytes, r.Flows[i].Bytes) })
			}
			u1, s1 := cpuTime(b)
			b.ReportMetric(float64(u1-u0)/float64(b.N)/1e6, "user-ms/op")
			b.ReportMetric(float64(s1-s0)/float64(b.N)/1e6, "sys-ms/op")
			b.ReportMetric(float64(kernel)/float64(n), "kernel-B/flow")
			b.ReportMetric(float64(unsafe.Sizeof(Flow{})), "reading-B/flow")
		})
	}
}

// fillMapEmpty is the memory of an empty map of n entries.
func fillMapEmpty(b *testing.B, n int) int {
	needRoot(b)
	m, err := openEBPF(Options{MaxFlows: n, IdleTimeout: DefaultIdleTimeout, SampleRate: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	return memlock(b, m.objs.Flows4.FD())
}

// The meter's cost to the traffic it counts: TCP throughput over the veth
// pair with the meter attached and without, alternating windows in one
// run. Reports the ratio (with/without) and each side's Gbit/s.
func BenchmarkThroughputWithMeter(b *testing.B) {
	l := newVethLab(b)
	var ln net.Listener
	l.inPeer(b, func() {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(l.peer4.String(), "0"))
		if err != nil {
			b.Fatal(err)
		}
	})
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 256<<10)
	window := func() float64 {
		var n int64
		start := time.Now()
		for time.Since(start) < 250*time.Millisecond {
			k, err := c.Write(buf)
			if err != nil {
				b.Fatal(err)
			}
			n += int64(k)
		}
		return float64(n) / time.Since(start).Seconds()
	}
	m, err := Open(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	slaves := map[int]string{l.ifindex: "fm0"}
	var with, without float64
	window() // warm up: past slow start
	b.ResetTimer()
	for range b.N {
		without += window()
		if err := m.Sync(slaves); err != nil {
			b.Fatal(err)
		}
		with += window()
		if err := m.Sync(nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(with/without, "ratio")
	b.ReportMetric(with*8/1e9/float64(b.N), "Gbit/s-with")
	b.ReportMetric(without*8/1e9/float64(b.N), "Gbit/s-without")
}
