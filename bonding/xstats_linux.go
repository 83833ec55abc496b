package bonding

import (
	"encoding/binary"
	"strings"

	"golang.org/x/sys/unix"
)

// Extended statistics of a bond slave (include/uapi/linux/if_link.h,
// if_bonding.h): IFLA_STATS_LINK_XSTATS_SLAVE nests LINK_XSTATS_TYPE_BOND,
// which nests BOND_XSTATS_3AD, which holds one u64 per BOND_3AD_STAT_*.
const (
	iflaStatsLinkXstatsSlave = 3
	linkXstatsTypeBond       = 2
	bondXstats3AD            = 1
	// SizeofIfStatsMsg is struct if_stats_msg: family, two pads, ifindex,
	// filter_mask.
	SizeofIfStatsMsg = 12
	// StatsFilterSlaveXstats asks RTM_GETSTATS for the slave's extended
	// statistics only (IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_XSTATS_SLAVE)).
	StatsFilterSlaveXstats = 1 << (iflaStatsLinkXstatsSlave - 1)
)

// ParseLACPDUStats decodes one RTM_NEWSTATS message (struct if_stats_msg
// and its attributes) of a bond slave. ok is false when the message has no
// 802.3ad counters (the bond runs another mode, or the kernel predates
// them: 4.19 added them).
func ParseLACPDUStats(msg []byte) (c *LACPDUCounters, ok bool) {
	if len(msg) < SizeofIfStatsMsg {
		return nil, false
	}
	walkAttrs(msg[SizeofIfStatsMsg:], func(typ uint16, val []byte) bool {
		if typ != iflaStatsLinkXstatsSlave {
			return true
		}
		walkAttrs(val, func(typ uint16, val []byte) bool {
			if typ != linkXstatsTypeBond {
				return true
			}
			walkAttrs(val, func(typ uint16, val []byte) bool {
				if typ == bondXstats3AD {
					c = parse3ADStats(val)
				}
				return c == nil
			})
			return c == nil
		})
		return c == nil
	})
	return c, c != nil
}

func parse3ADStats(b []byte) *LACPDUCounters {
	c := &LACPDUCounters{}
	fields := [...]*uint64{&c.Rx, &c.Tx, &c.UnknownRx, &c.IllegalRx, &c.MarkerRx, &c.MarkerTx,
		&c.MarkerRespRx, &c.MarkerRespTx, &c.MarkerUnknownRx}
	walkAttrs(b, func(typ uint16, val []byte) bool {
		if int(typ) < len(fields) && len(val) >= 8 {
			*fields[typ] = binary.NativeEndian.Uint64(val)
		}
		return true
	})
	return c
}

// ParseCarrierCounts reads the interface name, IFLA_CARRIER_UP_COUNT and
// _DOWN_COUNT from one RTM_NEWLINK message (struct ifinfomsg and its
// attributes); ok is false when the kernel sent no counts (before 4.16).
func ParseCarrierCounts(msg []byte) (name string, c *CarrierCounts, ok bool) {
	if len(msg) < unix.SizeofIfInfomsg {
		return "", nil, false
	}
	// Flags rather than pointers to the values: a pointer taken in the
	// callback would move a value to the heap for every attribute.
	var counts CarrierCounts
	var up, down bool
	walkAttrs(msg[unix.SizeofIfInfomsg:], func(typ uint16, val []byte) bool {
		if typ == unix.IFLA_IFNAME {
			name = strings.TrimRight(string(val), "\x00")
			return true
		}
		if len(val) < 4 {
			return true
		}
		switch typ {
		case unix.IFLA_CARRIER_UP_COUNT:
			counts.Up, up = uint64(binary.NativeEndian.Uint32(val)), true
		case unix.IFLA_CARRIER_DOWN_COUNT:
			counts.Down, down = uint64(binary.NativeEndian.Uint32(val)), true
		}
		return true
	})
	if !up || !down {
		return name, nil, false
	}
	c = new(CarrierCounts)
	*c = counts
	return name, c, true
}
