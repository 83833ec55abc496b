// Package nltest builds netlink messages the way the kernel lays them out,
// for tests of the code that decodes them (bonding, collector).
package nltest

import (
	"bytes"
	"encoding/binary"
	"net"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Link describes an RTM_NEWLINK message as rtnl_fill_ifinfo writes it:
// ifinfomsg, then attributes. Zero fields other than the name, MTU and
// operstate are left out.
type Link struct {
	Index    int
	Name     string
	Flags    uint32
	MTU      uint32
	Oper     uint8
	Master   int
	HWAddr   net.HardwareAddr
	Stats    *netlink.LinkStatistics64
	LinkInfo *nl.RtAttr
}

// Bytes is the message body, without the netlink header.
func (l Link) Bytes() []byte {
	im := nl.NewIfInfomsg(unix.AF_UNSPEC)
	im.Index = int32(l.Index)
	im.Flags = l.Flags
	b := append([]byte(nil), im.Serialize()...)
	add := func(a *nl.RtAttr) { b = append(b, a.Serialize()...) }
	add(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(l.Name)))
	add(nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(l.MTU)))
	add(nl.NewRtAttr(unix.IFLA_OPERSTATE, nl.Uint8Attr(l.Oper)))
	if l.Master != 0 {
		add(nl.NewRtAttr(unix.IFLA_MASTER, nl.Uint32Attr(uint32(l.Master))))
	}
	if l.HWAddr != nil {
		add(nl.NewRtAttr(unix.IFLA_ADDRESS, l.HWAddr))
	}
	if l.Stats != nil {
		var buf bytes.Buffer
		_ = binary.Write(&buf, binary.NativeEndian, l.Stats)
		add(nl.NewRtAttr(unix.IFLA_STATS64, buf.Bytes()))
	}
	if l.LinkInfo != nil {
		add(l.LinkInfo)
	}
	return b
}
