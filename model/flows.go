package model

import (
	"net/netip"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// The flow table: this host's connected TCP and UDP sockets, each with the
// slave the kernel's transmit hash sends it on, summed per slave next to
// what the slave's counters measured. Where the two disagree, traffic the
// host did not originate crosses the bond (forwarding, bridges, VMs,
// containers in other network namespaces), or the hash is not the one
// predicted (encap3+4 with socket hashes, balance-tlb/alb, balance-rr).

// Socket is one connected TCP or UDP socket and the way its packets leave.
type Socket struct {
	// ID tells the same socket apart across readings: the kernel's socket
	// cookie on a live host.
	ID    uint64
	Proto uint8 // bonding.ProtoTCP or bonding.ProtoUDP
	// State is the TCP state ("established", "fin-wait-1", ...), or
	// "connected" for UDP.
	State         string
	Local, Remote netip.AddrPort
	// TxBytes and RxBytes count the payload the socket sent (with
	// retransmissions where the kernel counts them: tcpi_bytes_sent, else
	// tcpi_bytes_acked) and received (tcpi_bytes_received). Valid when
	// HaveBytes: the kernel keeps no byte counts for UDP sockets.
	HaveBytes        bool
	TxBytes, RxBytes uint64
	Path             Path
}

// Path is how a socket's packets leave the host: the route's device, the
// bond under it, and the frame addresses the layer2 policies hash.
type Path struct {
	// Dev is the route's output interface.
	Dev string
	// Bond is the bond the packets cross: Dev itself, or the bond a VLAN
	// interface Dev sits on; "" when they cross no bond.
	Bond string
	// VLAN is the tag when Dev is a VLAN interface on the bond.
	VLAN uint16
	// SrcMAC is Dev's address; DstMAC the next hop's (the peer on the
	// subnet, else the gateway), valid when HaveDstMAC: without a
	// neighbour entry the kernel has not sent yet either.
	SrcMAC, DstMAC [6]byte
	HaveDstMAC     bool
	NextHop        netip.Addr
}

// Flow is a socket of a FlowTable with its rates and predicted slave.
type Flow struct {
	Socket
	// TxBps and RxBps are the socket's payload bit rates over the table's
	// Seconds; valid when HaveRate.
	HaveRate     bool
	TxBps, RxBps float64
	// Choice is where the bond sends the flow's packets (Choice.Slave),
	// or why that cannot be known (Choice.Reason).
	Choice bonding.Choice
}

// Packet is the frame description the transmit hash reads for f. Local
// sockets put their own hash on every packet (L4Hash), which encap3+4
// uses instead of the headers.
func (f *Flow) Packet() bonding.Flow {
	return bonding.Flow{
		SrcMAC: f.Path.SrcMAC, DstMAC: f.Path.DstMAC, VLAN: f.Path.VLAN,
		Src: f.Local.Addr(), Dst: f.Remote.Addr(), Proto: f.Proto,
		SrcPort: f.Local.Port(), DstPort: f.Remote.Port(), L4Hash: true,
	}
}

// FlowTable is one bond's flows at one refresh. It is immutable once
// built: the Sampler hands the same table to every snapshot until the next
// refresh, or until the bond's usable slaves change (then the same sockets
// are predicted again).
type FlowTable struct {
	Bond string
	// Time of the socket dump; Seconds since the previous one, the
	// denominator of the rates (0 on the first: no rates).
	Time    time.Time
	Seconds float64
	Kernel  bonding.KernelVersion
	// Flows in the kernel's dump order (the dashboard sorts).
	Flows []Flow
	// Slaves has one entry per slave of the bond, in enslave order.
	Slaves []SlaveFlows
	// Unpredictable counts flows whose slave cannot be known (the mode or
	// policy decides unseen, or the next hop's MAC is unknown); Reason is
	// the first reason given.
	Unpredictable int
	Reason        string
	// Dropped counts flows no slave can carry (every slave down).
	Dropped int
	// Err is set when the bond's mode or policy is unknown: no flow was
	// predicted.
	Err string
}

// HaveRates reports whether the flows carry rates (the second refresh on).
func (t *FlowTable) HaveRates() bool { return t != nil && t.Seconds > 0 }

// SlaveFlows sums the flows predicted on one slave.
type SlaveFlows struct {
	Slave string
	Flows int
	// TxBps and RxBps sum the rates of those flows (0 without rates).
	TxBps, RxBps float64
}

// Slave returns the entry of the slave called name, or nil.
func (t *FlowTable) Slave(name string) *SlaveFlows {
	if t == nil {
		return nil
	}
	for i := range t.Slaves {
		if t.Slaves[i].Slave == name {
			return &t.Slaves[i]
		}
	}
	return nil
}

// Predicted is a slave's share of the flow table, as JSON shows it beside
// the measured rates.
type Predicted struct {
	// Flows is the number of this host's sockets the hash sends here.
	Flows int `json:"flows"`
	// TxBps is their payload rate; null until a second socket dump.
	TxBps *float64 `json:"tx_bps"`
}
