// Package udpstat reads the kernel's UDP counters from /proc/net/snmp.
// Tests use the datagrams a host dropped on receipt (a full socket buffer
// on a busy machine) to tell such a drop from a datagram that went missing
// in the code under test.
package udpstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Field returns the named counter of the "Udp:" lines of an snmp file: a
// line of names followed by a line of values.
func Field(snmp []byte, name string) (uint64, error) {
	var names [][]byte
	for line := range bytes.SplitSeq(snmp, []byte{'\n'}) {
		f := bytes.Fields(line)
		if len(f) == 0 || string(f[0]) != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		if len(f) != len(names) {
			return 0, fmt.Errorf("snmp: %d UDP counters for %d names", len(f)-1, len(names)-1)
		}
		for i, n := range names[1:] {
			if string(n) == name {
				v, err := strconv.ParseUint(string(f[i+1]), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("snmp: Udp %s: %w", name, err)
				}
				return v, nil
			}
		}
		return 0, fmt.Errorf("snmp: no Udp %s", name)
	}
	return 0, fmt.Errorf("snmp: no Udp lines")
}

// InErrors is the datagrams the calling thread's network namespace could
// not deliver (InErrors counts a full receive buffer among its reasons).
func InErrors() (uint64, error) {
	b, err := os.ReadFile("/proc/thread-self/net/snmp")
	if err != nil {
		return 0, err
	}
	return Field(b, "InErrors")
}
