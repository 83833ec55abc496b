package model

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/flowmeter"
)

// The measured traffic: every flow the flow meter counted on a bond's
// slaves, in both directions and whoever sent it (this host, a VM behind a
// bridge, a routed peer), with rates from the difference of two readings,
// the slave the transmit hash predicts for each tx flow, and how often the
// prediction matches the slave the flow really took. Without a meter the
// bond's traffic says "sockets" and why: the flow table of this host's own
// sockets is then all there is.

// Traffic sources beside flowmeter's: SourceSockets means no meter runs,
// only this host's sockets are seen (FlowTable).
const SourceSockets = "sockets"

// MeasuredTraffic is one bond's flows as the meter counted them at one
// reading. Immutable once built; the Sampler hands the same value to every
// snapshot until the next reading.
type MeasuredTraffic struct {
	// Source is "ebpf", "sampled" (1 in SampleRate packets, scaled) or
	// "sockets" (no meter; Why says why).
	Source     string
	SampleRate int
	Why        string
	// Time of the reading; Seconds since the previous one, the
	// denominator of the rates (0 on the first reading: no rates).
	Time    time.Time
	Seconds float64
	// Flows sorted by bit rate, highest first (ties: bytes, then key).
	Flows []MeasuredFlow
	// Slaves sums the flows per slave and direction, in enslave order.
	Slaves    []MeasuredSlave
	Agreement Agreement
	// Kernel is the version the predictions follow.
	Kernel bonding.KernelVersion
	// MapEntries and MapSize are the meter's flow map fill (all bonds
	// share one map).
	MapEntries, MapSize int
	// recordedRates marks traffic read back from JSON with rates (the
	// interval itself is not recorded).
	recordedRates bool
}

// MeasuredFlow is one flow on one slave in one direction. Flow points
// into the meter's reading, which the Sampler owns once Read returned it
// and never changes after: a refresh copies no flow.
type MeasuredFlow struct {
	*flowmeter.Flow
	// Bps and Pps are the rates over the traffic's Seconds; valid when
	// HaveRate (not on the first reading, nor after a counter went back).
	HaveRate bool
	Bps, Pps float64
	// Predicted is where the transmit hash sends a tx flow over the bond's
	// usable slaves now; Unpredictable on rx (the switch picks).
	Predicted bonding.Choice
	// Local marks a flow of one of this host's sockets (in the FlowTable).
	Local bool
	// Forwarded marks a flow the host did not originate or terminate: a
	// tx flow that entered on another interface (a VM's tap, a bridge or
	// router port), an rx flow to the MAC such a flow came from.
	Forwarded bool
}

// IsTx reports whether f is transmitted by its slave.
func (f *MeasuredFlow) IsTx() bool { return f.Direction == flowmeter.Tx }

// PredictedSlave is the one slave the hash names for a tx flow, or "".
func (f *MeasuredFlow) PredictedSlave() string {
	if !f.IsTx() {
		return ""
	}
	switch f.Predicted.Outcome {
	case bonding.Hashed, bonding.Active:
		return f.Predicted.Slave
	}
	return ""
}

// Disagrees reports whether a tx flow took another slave than predicted.
func (f *MeasuredFlow) Disagrees() bool {
	p := f.PredictedSlave()
	return p != "" && p != f.Slave
}

// ProtoName names the flow's protocol as iftop and ss do: "tcp", "udp",
// "icmp", ..., the IP protocol number otherwise, and for frames that are
// not IP their ethertype ("arp", "lacp", "lldp", "0x88b5").
func (f *MeasuredFlow) ProtoName() string {
	switch f.EtherType {
	case 0x0800, 0x86DD:
		return IPProtoName(f.Proto)
	case 0x0806:
		return "arp"
	case 0x8809:
		return "lacp"
	case 0x88cc:
		return "lldp"
	}
	return fmt.Sprintf("0x%04x", f.EtherType)
}

// IPProtoName names an IP protocol: "tcp", "udp", ..., or its number.
func IPProtoName(p uint8) string {
	switch p {
	case bonding.ProtoTCP:
		return "tcp"
	case bonding.ProtoUDP:
		return "udp"
	case bonding.ProtoICMP:
		return "icmp"
	case bonding.ProtoICMPv6:
		return "icmpv6"
	case bonding.ProtoSCTP:
		return "sctp"
	case bonding.ProtoUDPLite:
		return "udplite"
	case 47:
		return "gre"
	case 50:
		return "esp"
	}
	return fmt.Sprint(p)
}

// MeasuredSlave sums one slave's flows over the interval; the Lost rates
// are what the meter counted in no flow (its map was full).
type MeasuredSlave struct {
	Slave                string
	TxFlows, RxFlows     int
	TxBps, RxBps         float64
	LostTxBps, LostRxBps float64
	// LostTxBytes and LostRxBytes are cumulative.
	LostTxBytes, LostRxBytes uint64
}

// Agreement is the live hash check: of the tx flows that moved in the
// interval, how many took the slave the hash predicts.
type Agreement struct {
	// Flows counts the tx flows that moved (every tx flow on the first
	// reading); Unpredictable those without one predicted slave (the mode
	// or policy decides unseen); Agree those on their predicted slave.
	Flows, Agree, Unpredictable int
	// BytesAgreeShare is the agreeing flows' part of the predictable
	// flows' bytes in the interval (cumulative on the first reading);
	// nil when no predictable flow moved.
	BytesAgreeShare *float64
}

// Disagree is the number of predictable tx flows on another slave.
func (a *Agreement) Disagree() int { return a.Flows - a.Unpredictable - a.Agree }

// Slave returns the sums of the slave called name, or nil.
func (t *MeasuredTraffic) Slave(name string) *MeasuredSlave {
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

// Metered reports whether t holds flows a meter counted (not "sockets").
func (t *MeasuredTraffic) Metered() bool { return t != nil && t.Source != SourceSockets }

// HaveRates reports whether the flows carry rates (the second reading on).
func (t *MeasuredTraffic) HaveRates() bool {
	return t != nil && (t.Seconds > 0 || t.recordedRates)
}

// LostBytes sums the bytes the meter counted in no flow on this bond's
// slaves (its map was full), since it started.
func (t *MeasuredTraffic) LostBytes() uint64 {
	var n uint64
	for i := range t.Slaves {
		n += t.Slaves[i].LostTxBytes + t.Slaves[i].LostRxBytes
	}
	return n
}

// Top returns t with at most n flows (the busiest), sharing the rest; t
// itself when it has no more than n, or when n < 0 (no limit).
func (t *MeasuredTraffic) Top(n int) *MeasuredTraffic {
	if t == nil || n < 0 || len(t.Flows) <= n {
		return t
	}
	c := *t
	c.Flows = t.Flows[:n:n]
	return &c
}

// The JSON form: the keys are an interface (docs/json.md, "The flow
// meter, per bond").

type trafficJSON struct {
	Source     string               `json:"source"`
	SampleRate *int                 `json:"sample_rate"`
	Why        string               `json:"why,omitempty"`
	Flows      []MeasuredFlow       `json:"flows"`
	Agreement  *agreementJSON       `json:"agreement"`
	LostBytes  map[string]lostBytes `json:"lost_bytes"`
}

type agreementJSON struct {
	Flows           int      `json:"flows"`
	Agree           int      `json:"agree"`
	Unpredictable   int      `json:"unpredictable"`
	BytesAgreeShare *float64 `json:"bytes_agree_share"`
}

type lostBytes struct {
	Tx uint64 `json:"tx"`
	Rx uint64 `json:"rx"`
}

// MarshalJSON writes the "traffic" object of a bond.
func (t *MeasuredTraffic) MarshalJSON() ([]byte, error) {
	out := trafficJSON{Source: t.Source, Why: t.Why, Flows: t.Flows, LostBytes: map[string]lostBytes{}}
	if out.Flows == nil {
		out.Flows = []MeasuredFlow{}
	}
	if t.Metered() {
		out.SampleRate = new(t.SampleRate)
		a := t.Agreement
		out.Agreement = &agreementJSON{Flows: a.Flows, Agree: a.Agree, Unpredictable: a.Unpredictable, BytesAgreeShare: a.BytesAgreeShare}
		for i := range t.Slaves {
			s := &t.Slaves[i]
			out.LostBytes[s.Slave] = lostBytes{Tx: s.LostTxBytes, Rx: s.LostRxBytes}
		}
	}
	return json.Marshal(out)
}

type flowJSON struct {
	Slave          string      `json:"slave"`
	Direction      string      `json:"direction"`
	Proto          string      `json:"proto"`
	Src            *netip.Addr `json:"src"`
	Dst            *netip.Addr `json:"dst"`
	SrcPort        uint16      `json:"sport"`
	DstPort        uint16      `json:"dport"`
	SrcMAC         string      `json:"src_mac"`
	DstMAC         string      `json:"dst_mac"`
	VLAN           uint16      `json:"vlan"`
	Bytes          uint64      `json:"bytes"`
	Packets        uint64      `json:"packets"`
	Bps            *float64    `json:"bps"`
	Pps            *float64    `json:"pps"`
	PredictedSlave *string     `json:"predicted_slave"`
	Local          bool        `json:"local"`
	Sampled        bool        `json:"sampled"`
}

// MarshalJSON writes one flow: addresses null for frames that are not
// IP, rates null without a previous reading, predicted_slave null on rx
// and where the hash cannot name one slave.
func (f MeasuredFlow) MarshalJSON() ([]byte, error) {
	j := flowJSON{
		Slave: f.Slave, Direction: f.Direction.String(), Proto: f.ProtoName(),
		SrcPort: f.SrcPort, DstPort: f.DstPort, SrcMAC: MAC(f.SrcMAC), DstMAC: MAC(f.DstMAC),
		VLAN: f.VLAN, Bytes: f.Bytes, Packets: f.Packets, Local: f.Local, Sampled: f.Sampled,
	}
	if f.Src.IsValid() {
		j.Src = &f.Src
	}
	if f.Dst.IsValid() {
		j.Dst = &f.Dst
	}
	if f.HaveRate {
		j.Bps, j.Pps = new(f.Bps), new(f.Pps)
	}
	if p := f.PredictedSlave(); p != "" {
		j.PredictedSlave = &p
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the "traffic" object back (recordings): the flows
// with their rates and predicted slaves, the agreement, the lost bytes.
// Per-slave rate sums, map fill and the interval are not in the JSON.
func (t *MeasuredTraffic) UnmarshalJSON(data []byte) error {
	var j trafficJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*t = MeasuredTraffic{Source: j.Source, Why: j.Why, Flows: j.Flows}
	if j.SampleRate != nil {
		t.SampleRate = *j.SampleRate
	}
	if a := j.Agreement; a != nil {
		t.Agreement = Agreement{Flows: a.Flows, Agree: a.Agree, Unpredictable: a.Unpredictable, BytesAgreeShare: a.BytesAgreeShare}
	}
	names := slices.Sorted(maps.Keys(j.LostBytes))
	for _, n := range names {
		l := j.LostBytes[n]
		t.Slaves = append(t.Slaves, MeasuredSlave{Slave: n, LostTxBytes: l.Tx, LostRxBytes: l.Rx})
	}
	for i := range t.Flows {
		f := &t.Flows[i]
		s := t.Slave(f.Slave)
		if s == nil {
			t.Slaves = append(t.Slaves, MeasuredSlave{Slave: f.Slave})
			s = &t.Slaves[len(t.Slaves)-1]
		}
		if f.IsTx() {
			s.TxFlows++
			s.TxBps += f.Bps
		} else {
			s.RxFlows++
			s.RxBps += f.Bps
		}
		t.recordedRates = t.recordedRates || f.HaveRate
	}
	return nil
}

// UnmarshalJSON reads one flow back.
func (f *MeasuredFlow) UnmarshalJSON(data []byte) error {
	var j flowJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*f = MeasuredFlow{Flow: &flowmeter.Flow{Slave: j.Slave}, Local: j.Local}
	switch j.Direction {
	case "tx":
		f.Direction = flowmeter.Tx
	case "rx":
		f.Direction = flowmeter.Rx
	default:
		return fmt.Errorf("flow direction %q: want tx or rx", j.Direction)
	}
	if j.Src != nil {
		f.Src = *j.Src
	}
	if j.Dst != nil {
		f.Dst = *j.Dst
	}
	f.EtherType, f.Proto = etherTypeOf(j.Proto, f.Src)
	f.SrcPort, f.DstPort, f.VLAN = j.SrcPort, j.DstPort, j.VLAN
	f.SrcMAC, _ = parseMAC(j.SrcMAC)
	f.DstMAC, _ = parseMAC(j.DstMAC)
	f.Bytes, f.Packets, f.Sampled = j.Bytes, j.Packets, j.Sampled
	if j.Bps != nil {
		f.HaveRate, f.Bps = true, *j.Bps
		if j.Pps != nil {
			f.Pps = *j.Pps
		}
	}
	f.Predicted = RxChoice
	if f.IsTx() {
		f.Predicted = bonding.Choice{Outcome: bonding.Unpredictable, Index: -1, Reason: "not recorded"}
		if j.PredictedSlave != nil {
			f.Predicted = bonding.Choice{Outcome: bonding.Hashed, Slave: *j.PredictedSlave, Index: -1}
		}
	}
	return nil
}

// etherTypeOf inverts ProtoName: the ethertype and IP protocol a
// recorded flow's "proto" stands for.
func etherTypeOf(proto string, src netip.Addr) (uint16, uint8) {
	switch proto {
	case "arp":
		return 0x0806, 0
	case "lacp":
		return 0x8809, 0
	case "lldp":
		return 0x88cc, 0
	}
	if strings.HasPrefix(proto, "0x") {
		v, _ := strconv.ParseUint(proto[2:], 16, 16)
		return uint16(v), 0
	}
	et := uint16(0x0800)
	if src.Is6() {
		et = 0x86DD
	}
	for p := range 256 {
		if IPProtoName(uint8(p)) == proto {
			return et, uint8(p)
		}
	}
	return et, 0
}

func parseMAC(s string) ([6]byte, error) {
	var m [6]byte
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return m, fmt.Errorf("%q is not a MAC address", s)
	}
	copy(m[:], hw)
	return m, nil
}

// RxChoice is the prediction of every received flow: the hash has no say.
var RxChoice = bonding.Choice{Outcome: bonding.Unpredictable, Index: -1, Reason: "the switch (the link partner) picks the slave a frame arrives on"}

// MAC writes m as the kernel does: lower-case hex, colons.
func MAC(m [6]byte) string { return net.HardwareAddr(m[:]).String() }
