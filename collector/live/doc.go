// Package live is the source that reads the running kernel: every bond
// and slave from one rtnetlink dump a tick (bond and slave attributes,
// 64-bit counters), /proc/net/bonding for what netlink lacks, sysfs and
// ethtool cached between link notifications; Open vSwitch bonds beside
// them (ReadOVS). It implements collector.Source and most capabilities of
// the contract (collector/source.go): Notifier (RTNLGRP_LINK),
// NeighborReader and PortCounterReader (LLDP/CDP and LACPDUs on packet
// sockets, carrier and LACPDU counters), FirmwareLLDPReader and
// PhysicalReader (ethtool), HostReader and ConfigReader (/proc/sys, /etc
// and sysfs), Recycler. Flows reads this host's sockets and their paths
// (sock_diag, routes, neighbours) for the flow table; the caller opens it
// beside the Source and hands it to the Sampler (Options.Flows).
//
// Bonding is a Linux driver: elsewhere New and NewFlows fail.
package live
