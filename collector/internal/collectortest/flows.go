package collectortest

import (
	"net/netip"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/model"
)

// The MACs of this host and of its peer in the flows the tests make.
var (
	HostMAC = [6]byte{2, 0, 0, 0, 0, 1}
	PeerMAC = [6]byte{2, 0, 0, 0, 0, 2}
)

// UDPFlow is a UDP flow from 10.0.0.1:sport to 10.0.0.2:53 on slave.
func UDPFlow(slave string, dir flowmeter.Direction, sport uint16, bytes uint64) flowmeter.Flow {
	f := flowmeter.Flow{Slave: slave}
	f.Ifindex = 10 + int(slave[3]-'0')
	f.Direction = dir
	f.EtherType, f.Proto = 0x0800, bonding.ProtoUDP
	f.Src, f.Dst = netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	f.SrcPort, f.DstPort = sport, 53
	f.SrcMAC, f.DstMAC = HostMAC, PeerMAC
	if dir == flowmeter.Rx {
		f.Src, f.Dst, f.SrcPort, f.DstPort = f.Dst, f.Src, f.DstPort, f.SrcPort
		f.SrcMAC, f.DstMAC = PeerMAC, HostMAC
	}
	f.Bytes, f.Packets = bytes, bytes/100
	return f
}

// ManySockets are n established TCP sockets of 10.0.0.1 across bond0,
// each to its own peer, with byte counts.
func ManySockets(n int) []model.Socket {
	out := make([]model.Socket, n)
	for i := range out {
		out[i] = model.Socket{ID: uint64(i + 1), Proto: bonding.ProtoTCP, State: "established",
			Local:     netip.AddrPortFrom(netip.MustParseAddr("10.0.0.1"), uint16(10000+i%50000)),
			Remote:    netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 443),
			HaveBytes: true, TxBytes: uint64(i) * 1000,
			Path: model.Path{Dev: "bond0", Bond: "bond0", SrcMAC: [6]byte{2, 0, 0, 0, 0, 1}, DstMAC: [6]byte{2, 0, 0, 0, 0, byte(i)}, HaveDstMAC: true}}
	}
	return out
}
