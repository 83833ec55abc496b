package bonding

import (
	"bytes"
	"fmt"
	"strconv"
)

// netDevColumns maps the 16 numeric columns of /proc/net/dev to our
// counters; -1 marks columns bondtop does not follow. The kernel folds
// rx_missed_errors into "drop" and several errors into "frame", and has no
// rx_over_errors column, so statistics/ or netlink are preferred when
// available.
var netDevColumns = [16]int{
	int(RxBytes), int(RxPackets), int(RxErrors), int(RxDropped), int(RxFifoErrors), -1, -1, -1,
	int(TxBytes), int(TxPackets), int(TxErrors), int(TxDropped), -1, -1, -1, -1,
}

// ParseNetDev parses /proc/net/dev into counters per interface. Lines that
// do not parse are returned as warnings; the other interfaces still count.
func ParseNetDev(data []byte) (map[string]Counters, []string) {
	out := make(map[string]Counters)
	var warnings []string
	for line := range bytes.Lines(data) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue // the two header lines
		}
		ifname := string(bytes.TrimSpace(name))
		var cs Counters
		col := 0
		bad := false
		for f := range bytes.FieldsSeq(rest) {
			if col >= len(netDevColumns) {
				break
			}
			if c := netDevColumns[col]; c >= 0 {
				v, err := strconv.ParseUint(string(f), 10, 64)
				if err != nil {
					bad = true
					break
				}
				cs.Set(Counter(c), v)
			}
			col++
		}
		if bad || col < len(netDevColumns) {
			warnings = append(warnings, fmt.Sprintf("/proc/net/dev: cannot parse the line of %q", truncate(ifname, 20)))
			continue
		}
		out[ifname] = cs
	}
	return out, warnings
}
