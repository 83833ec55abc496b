// Package flowmeter counts every flow that crosses a bond's slaves, in both
// directions, whoever sent it: this host's sockets, forwarded, bridged and
// VM traffic alike. It owns the in-kernel meter (an eBPF program at TC
// egress and ingress of each slave, attached through TCX where the kernel
// has it and a clsact qdisc otherwise) and its fallback (AF_PACKET with a
// sampling classic BPF filter), and hands out cumulative per-flow counters.
// Rates, predictions and findings are the collector's and diagnose's job:
// this package only measures, and never changes, drops or reorders a packet.
package flowmeter

import (
	"net/netip"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// Direction is the way a flow crosses a slave.
type Direction uint8

const (
	// Tx is a frame the slave transmits (TC egress).
	Tx Direction = iota
	// Rx is a frame the slave receives (TC ingress).
	Rx
)

// String returns "tx" or "rx", the names JSON uses.
func (d Direction) String() string {
	if d == Rx {
		return "rx"
	}
	return "tx"
}

// SourceKind says how a Reading was measured.
type SourceKind string

const (
	// SourceEBPF counts every packet in the kernel.
	SourceEBPF SourceKind = "ebpf"
	// SourceSampled counts 1 in SampleRate packets through AF_PACKET and
	// scales the counts up: estimates.
	SourceSampled SourceKind = "sampled"
)

// Key identifies one flow on one slave in one direction: enough of the
// frame to run the bond's transmit hash on it again.
type Key struct {
	Ifindex   int
	Direction Direction
	// VLAN is the 802.1Q TCI (VID and priority) the frame carries, in the
	// socket buffer or in the frame; 0 when untagged.
	VLAN uint16
	// EtherType of the frame (after a VLAN tag): 0x0800, 0x86DD, 0x0806...
	EtherType uint16
	// Proto is the IP protocol (IPv6: the first next header, as the
	// bond's hash reads it, except that a fragment shows the fragment
	// header's next header); 0 for non-IP frames.
	Proto uint8
	// Src and Dst are the IP addresses; invalid (zero) for non-IP frames.
	Src, Dst netip.Addr
	// SrcPort and DstPort for TCP, UDP, UDP-Lite, SCTP and DCCP. For ICMP
	// and ICMPv6 echo, DstPort holds the identifier and SrcPort is 0; for
	// ESP and AH they hold the SPI's high and low halves.
	SrcPort, DstPort uint16
	// Fragment marks a fragment of a fragmented IP datagram (ports are
	// then zero: only the first fragment carries them).
	Fragment bool
	// ICMPType and ICMPCode of an ICMP or ICMPv6 message (the hash reads
	// them with the identifier).
	ICMPType, ICMPCode uint8
	// FrameTPID is the TPID (0x8100, 0x88a8) of a VLAN tag still inside
	// the frame rather than offloaded to the socket buffer; 0 otherwise.
	// The bond hashes such a frame as non-IP, by its MACs.
	FrameTPID uint16
	// Quoted is the header an ICMP error quotes (layer2+3 and layer3+4
	// hash the error by it); zero for other frames.
	Quoted bonding.Quoted
}

// Counters are a flow's cumulative totals since the meter first saw it.
type Counters struct {
	// Bytes are the bytes on the wire (L2 header included, no FCS);
	// Packets counts GSO segments, not super-packets. Scaled estimates
	// for SourceSampled.
	Bytes, Packets uint64
	// FirstSeen and LastSeen are wall-clock times of the first and the
	// latest packet.
	FirstSeen, LastSeen time.Time
	// SrcMAC and DstMAC are the frame's addresses as last seen.
	SrcMAC, DstMAC [6]byte
	// SkbHash is the socket buffer's hash at egress, and L4Hash whether it
	// is a layer 4 hash (encap3+4 uses it as is). Tx only.
	SkbHash uint32
	L4Hash  bool
	// IngressIfindex is the interface the packet entered the host on (a VM
	// tap, a bridge port, a router port); 0 for locally sent packets and
	// on rx.
	IngressIfindex int
	// Sampled marks counters that took packets counted 1 in N (the eBPF
	// meter above its budget, or the sampled meter): Bytes and Packets
	// are then estimates.
	Sampled bool
}

// Flow is a Key with its Counters and the slave's name.
type Flow struct {
	Key
	Counters
	// Slave is the name of the interface with Key.Ifindex.
	Slave string
}

// Packet is the frame description the bond's transmit hash reads for f.
// (A frame whose EtherType field is 0, an 802.3 length of 0, or whose IP
// header was cut short has no such description: bonding.Hash refuses it.)
func (f *Flow) Packet() bonding.Flow {
	p := bonding.Flow{
		SrcMAC: f.SrcMAC, DstMAC: f.DstMAC, EtherType: f.EtherType,
		VLAN: f.VLAN, Proto: f.Proto, Fragment: f.Fragment, L4Hash: f.L4Hash,
	}
	if f.FrameTPID != 0 {
		// The tag is in the frame: for the bond its EtherType is the
		// TPID, and it hashes the frame by layer2.
		p.EtherType = f.FrameTPID
		return p
	}
	if (f.EtherType != bonding.EtherTypeIPv4 && f.EtherType != bonding.EtherTypeIPv6) || !f.Src.IsValid() {
		return p
	}
	p.EtherType = 0
	p.Src, p.Dst = f.Src, f.Dst
	switch f.Proto {
	case bonding.ProtoICMP, bonding.ProtoICMPv6:
		p.ICMPType, p.ICMPCode = f.ICMPType, f.ICMPCode
		p.ICMPID = f.DstPort
		p.Quoted = f.Quoted
	case bonding.ProtoESP, bonding.ProtoAH:
		// The meter keeps the SPI in the port fields.
		p.SPI = uint32(f.SrcPort)<<16 | uint32(f.DstPort)
	default:
		p.SrcPort, p.DstPort = f.SrcPort, f.DstPort
	}
	return p
}

// Lost counts what a slave carried in one direction that no flow entry
// holds, because the flow map was full: the bytes still count, here.
type Lost struct {
	Ifindex   int
	Slave     string
	Direction Direction
	Bytes     uint64
	Packets   uint64
}

// Reading is what the meter had counted at one instant. Counters are
// cumulative: a consumer computes rates from the difference of two
// readings, and treats a flow missing from the newer one as idle (the
// meter deletes idle flows to bound its map).
type Reading struct {
	Time   time.Time
	Source SourceKind
	// SampleRate is N of "1 in N": for SourceSampled always; for
	// SourceEBPF the highest N a CPU counts with now (1: every packet
	// counted, the budget not reached).
	SampleRate int
	// Budget is the eBPF meter's budget in packets per second per CPU
	// (Options.Budget; 0: none).
	Budget int
	// SeenPackets and CountedPackets are the socket buffers the eBPF
	// programs ran for since Open, and those they counted (all of them
	// below the budget): every CPU's, to the start of its current rate
	// window (10 ms, or the CPU's last packet).
	SeenPackets, CountedPackets uint64
	// EstimateVariance is the variance of the packet estimates counting
	// 1 in N put in all the flows, in packets² (N(N-1) for each packet
	// counted so): the square root is the standard deviation of their
	// total, and a share of the packets has about that share of it.
	EstimateVariance uint64
	Flows            []Flow
	// Lost has an entry per slave and direction with bytes no flow entry
	// holds (the map was full); cumulative like the flows.
	Lost []Lost
	// MapEntries and MapSize are the flow map's fill and capacity.
	MapEntries, MapSize int
	// Warnings say what went wrong on a slave (an attach that failed).
	Warnings []string
	// Why says, when Source is not SourceEBPF, why the in-kernel meter
	// is not running (and what would enable it).
	Why string
	// Attach says how the meter is attached: "tcx", "clsact" or
	// "af_packet" ("clsact+tcx" if slaves differ; "" before Sync).
	Attach string
	// KernelCPU is the CPU time the eBPF programs spent, and KernelRuns
	// how often they ran, since Open: counted only with
	// Options.KernelStats (zero otherwise).
	KernelCPU  time.Duration
	KernelRuns uint64
}

// Meter measures the flows of a set of slaves.
type Meter interface {
	// Sync attaches to every slave in slaves (ifindex to name) and
	// detaches from any slave attached before and not listed now: call
	// it whenever a bond's slaves change.
	Sync(slaves map[int]string) error
	// Read returns the counters as they are now (one batch lookup).
	Read() (Reading, error)
	// Close detaches from every slave and frees the kernel objects.
	Close() error
}

// Options tune Open.
type Options struct {
	// MaxFlows bounds the flow map (default DefaultMaxFlows); beyond it
	// bytes count in Reading.Lost.
	MaxFlows int
	// SampleRate is N for the sampled fallback (default DefaultSampleRate).
	SampleRate int
	// IdleTimeout deletes flows unseen for this long (default
	// DefaultIdleTimeout).
	IdleTimeout time.Duration
	// ForceClsact attaches through a clsact qdisc even where the kernel
	// has TCX (the lab tests both paths on 6.12).
	ForceClsact bool
	// NoEBPF skips the eBPF meter and goes straight to the fallback.
	NoEBPF bool
	// Budget is the packets per second per CPU the eBPF meter counts one
	// by one; above it a CPU counts 1 in N packets at random, N times
	// each, so its cost stays near the budget's (docs/flow-meter.md).
	// 0 means DefaultBudget; a negative budget counts every packet.
	Budget int
	// KernelStats has the kernel time the meter's programs
	// (Reading.KernelCPU). While the meter is open the kernel then times
	// every BPF program on the host (a clock read per run; off again at
	// Close or exit).
	KernelStats bool
}

// Defaults for Options.
const (
	DefaultMaxFlows    = 64 * 1024
	DefaultSampleRate  = 100
	DefaultIdleTimeout = 60 * time.Second
	// DefaultBudget keeps the meter under 2 % of a core per CPU: 20 ms a
	// second at the cost of a counted packet the benchmark measures
	// (docs/flow-meter.md), new flows and a full map weighed in.
	DefaultBudget = 250_000
)
