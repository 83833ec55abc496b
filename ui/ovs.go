package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/ui/format"
)

// ovsHeaderMode names an Open vSwitch bond in the header the way
// ovs-vsctl configures it: "ovs balance-tcp lacp active bridge br-ex".
func ovsHeaderMode(b *bonding.Bond, th *theme) line {
	l := line{{"ovs ", th.dim}, {format.OrDash(b.Mode), th.base}}
	if b.OVS != nil && b.OVS.LACP != "" && b.OVS.LACP != "off" {
		l = l.add(" lacp ", th.dim).add(b.OVS.LACP, th.base)
	}
	if b.Bridge != nil {
		l = l.add(" bridge ", th.dim).add(*b.Bridge, th.base)
	}
	return l
}

// ovsBucketsShown is how many of a member's buckets the details list,
// heaviest first.
const ovsBucketsShown = 6

// ovsMemberDetails is what Open vSwitch says of a member, for the slave
// details: bond/show's enabled and buckets, lacp/show's status and PDUs.
// Nothing for a Linux slave.
func ovsMemberDetails(s *bonding.Slave, th *theme) []line {
	o := s.OVS
	if o == nil {
		return nil
	}
	kv := func(k, v string) line { return line{{padRight(k, 22), th.dim}, {v, th.base}} }
	out := []line{nil, {{"Open vSwitch", th.heading}}}
	en := "disabled"
	if o.Enabled {
		en = "enabled"
	}
	out = append(out, kv("member", fmt.Sprintf("%s  may_enable %t", en, o.MayEnable)))
	if o.OFPort != nil {
		out = append(out, kv("ofport", strconv.FormatInt(*o.OFPort, 10)))
	}
	if o.LACPStatus != "" {
		pdus := ""
		if o.LACPRxPDUs != nil && o.LACPTxPDUs != nil {
			pdus = fmt.Sprintf("  PDUs rx %d tx %d", *o.LACPRxPDUs, *o.LACPTxPDUs)
		}
		out = append(out, kv("lacp", o.LACPStatus+pdus))
	}
	if len(o.Buckets) == 0 {
		return out
	}
	bs := slices.Clone(o.Buckets)
	slices.SortStableFunc(bs, func(a, b bonding.OVSBucket) int { return int(b.LoadKB - a.LoadKB) })
	var total int64
	for _, b := range bs {
		total += b.LoadKB
	}
	out = append(out, kv("buckets", fmt.Sprintf("%d, %s since the last rebalance", len(bs), kiloBytes(total))))
	var top []string
	for _, b := range bs[:min(len(bs), ovsBucketsShown)] {
		top = append(top, fmt.Sprintf("%d: %s", b.Hash, kiloBytes(b.LoadKB)))
	}
	return append(out, kv("heaviest", strings.Join(top, "  ")))
}

// kiloBytes writes bond/show's kB loads in the largest fitting unit.
func kiloBytes(kb int64) string {
	switch {
	case kb >= 1<<20:
		return fmt.Sprintf("%.1f GB", float64(kb)/(1<<20))
	case kb >= 1<<10:
		return fmt.Sprintf("%.1f MB", float64(kb)/(1<<10))
	}
	return fmt.Sprintf("%d kB", kb)
}
