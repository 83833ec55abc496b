// Package units formats rates and sizes the way network admins read them:
// SI prefixes, bits per second for rates (ifstat and iftop habits).
package units

import (
	"fmt"
	"math"
)

// Bits formats a bit rate with an SI prefix: "0 bit/s", "12.3 kbit/s",
// "1.00 Gbit/s". NaN and negative values (unknown) give "-".
func Bits(bps float64) string {
	return si(bps, "bit/s")
}

// Packets formats a packet rate: "830 p/s", "1.20 Mp/s".
func Packets(pps float64) string {
	return si(pps, "p/s")
}

// Speed formats a link speed in Mbit/s as the kernel reports it: "1G",
// "10G", "100M", "2.5G".
func Speed(mbps int) string {
	switch {
	case mbps >= 1000 && mbps%1000 == 0:
		return fmt.Sprintf("%dG", mbps/1000)
	case mbps >= 1000:
		return fmt.Sprintf("%.1fG", float64(mbps)/1000)
	default:
		return fmt.Sprintf("%dM", mbps)
	}
}

func si(v float64, unit string) string {
	if math.IsNaN(v) || v < 0 {
		return "-"
	}
	prefixes := []string{"", "k", "M", "G", "T", "P"}
	i := 0
	for v >= 1000 && i < len(prefixes)-1 {
		v /= 1000
		i++
	}
	switch {
	case i == 0:
		return fmt.Sprintf("%.0f %s", v, unit)
	case v >= 100:
		return fmt.Sprintf("%.0f %s%s", v, prefixes[i], unit)
	case v >= 10:
		return fmt.Sprintf("%.1f %s%s", v, prefixes[i], unit)
	default:
		return fmt.Sprintf("%.2f %s%s", v, prefixes[i], unit)
	}
}
