package bonding

import (
	"errors"
	"fmt"
	"strconv"
)

// Exclusion names a slave that cannot transmit and says why.
type Exclusion struct {
	Slave  string `json:"slave"`
	Reason string `json:"reason"`
}

// UsableSlaves returns the slaves the kernel hashes over, in enslave order
// (bond_update_slave_arr): in 802.3ad only the members of the active
// aggregator, and of those (in every mode) the ones whose link is up
// (mii_status "up", not "going down" or "going back"), whose interface is
// running, and which are not in the backup state. The others come back in
// excluded with the first reason the kernel would skip them for.
//
// A value no source gave (nil) does not exclude a slave: without the
// bond's aggregator id (a reader without CAP_NET_ADMIN) the slaves of other
// aggregators are still excluded by their state, which the kernel sets to
// backup.
func UsableSlaves(b *Bond) (usable []string, excluded []Exclusion) {
	usable = make([]string, 0, len(b.Slaves))
	lacp := b.Is8023AD()
	if lacp && b.LACP != nil && b.LACP.NoActiveAggregator {
		// No active aggregator: the kernel empties the array and drops.
		for _, s := range b.Slaves {
			excluded = append(excluded, Exclusion{s.Name, "the bond has no active aggregator"})
		}
		return usable, excluded
	}
	for i := range b.Slaves {
		s := &b.Slaves[i]
		if k := skipOf(b, s, lacp); k != kept {
			excluded = append(excluded, Exclusion{s.Name, k.reason(b, s)})
			continue
		}
		usable = append(usable, s.Name)
	}
	return usable, excluded
}

// AppendUsable is UsableSlaves for a bond whose slaves are kept elsewhere
// (n of them, the i-th given by slave): it appends the usable names to
// dst without copying the bond, for callers that ask on every tick (it
// puts no reason in words, so it allocates nothing beyond dst).
func AppendUsable(dst []string, b *Bond, n int, slave func(i int) *Slave) []string {
	lacp := b.Is8023AD()
	if lacp && b.LACP != nil && b.LACP.NoActiveAggregator {
		return dst
	}
	for i := range n {
		if s := slave(i); skipOf(b, s, lacp) == kept {
			dst = append(dst, s.Name)
		}
	}
	return dst
}

// skip is why the kernel skips a slave, before it is put in words.
type skip uint8

const (
	kept skip = iota
	otherAggregator
	interfaceDown
	linkNotUp
	backupState
)

// skipOf gives why the kernel skips s, or kept. The order of the tests is
// the kernel's: aggregator first, then bond_slave_can_tx.
func skipOf(b *Bond, s *Slave, lacp bool) skip {
	if lacp && b.LACP != nil && b.LACP.AggregatorID != nil && s.AggregatorID != nil && *s.AggregatorID != *b.LACP.AggregatorID {
		return otherAggregator
	}
	if s.OperState != nil {
		switch *s.OperState {
		case "down", "lowerlayerdown", "notpresent":
			return interfaceDown
		}
	}
	if s.MIIStatus != nil && *s.MIIStatus != "up" {
		return linkNotUp
	}
	if s.State != nil && *s.State == "backup" {
		return backupState
	}
	return kept
}

// reason puts k in words for slave s of b.
func (k skip) reason(b *Bond, s *Slave) string {
	switch k {
	case otherAggregator:
		return "in aggregator " + strconv.Itoa(*s.AggregatorID) + ", the active one is " + strconv.Itoa(*b.LACP.AggregatorID)
	case interfaceDown:
		return "interface " + *s.OperState
	case linkNotUp:
		return "link " + *s.MIIStatus
	case backupState:
		return "backup"
	}
	return ""
}

// Outcome is the kind of answer a Predictor gives.
type Outcome uint8

// The outcomes, from the most to the least precise.
const (
	// Hashed: usable[hash % len(usable)].
	Hashed Outcome = iota
	// Active: the bond's active slave takes it (active-backup; in
	// balance-tlb the traffic it does not balance).
	Active
	// EverySlave: broadcast mode sends a copy on each slave.
	EverySlave
	// Dropped: no slave can transmit.
	Dropped
	// Unpredictable: the kernel decides by something the packet does not
	// show (load, a round-robin counter, a socket's hash).
	Unpredictable
)

// String gives the outcome's name as JSON and the command line print it.
func (o Outcome) String() string {
	switch o {
	case Hashed:
		return "hashed"
	case Active:
		return "active"
	case EverySlave:
		return "every_slave"
	case Dropped:
		return "dropped"
	case Unpredictable:
		return "unpredictable"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Choice is where a Predictor says a packet leaves.
type Choice struct {
	Outcome Outcome
	// Slave is the egress slave for Hashed and Active; "" otherwise.
	Slave string
	// Hash and Index (into the usable slaves, of which there are Count)
	// are set for Hashed; Index is -1 otherwise.
	Hash  uint32
	Index int
	Count int
	// Reason says why for every outcome but Hashed.
	Reason string
}

// Predictor picks the egress slave of a bond for packets, as the kernel's
// transmit path does for each mode. Build it once per bond state (see
// NewPredictor) and call Predict per packet; Predict allocates nothing.
type Predictor struct {
	// Mode is the kernel's mode name (ModeXOR, Mode8023AD, ...).
	Mode   string
	Policy Policy
	Kernel KernelVersion
	// Usable are the slaves that can transmit, in enslave order.
	Usable []string
	// ActiveSlave is the bond's active slave (active-backup,
	// balance-tlb, balance-alb), "" when none.
	ActiveSlave string
	// TLBDynamicLB is balance-tlb's tlb_dynamic_lb: when set, slaves are
	// picked by load.
	TLBDynamicLB bool
}

// NewPredictor builds the Predictor for b's current state on kernel k. It
// fails when the bond's mode or, where the mode hashes, its policy is
// unknown.
func NewPredictor(b *Bond, k KernelVersion) (*Predictor, error) {
	if b.Mode == nil {
		return nil, fmt.Errorf("%s: bonding mode unknown", b.Name)
	}
	p := &Predictor{Mode: *b.Mode, Kernel: k}
	p.Usable, _ = UsableSlaves(b)
	if b.ActiveSlave != nil {
		p.ActiveSlave = *b.ActiveSlave
	}
	// The default of tlb_dynamic_lb is 1: unknown counts as set.
	p.TLBDynamicLB = b.TLBDynamicLB == nil || *b.TLBDynamicLB != 0
	switch p.Mode {
	case ModeXOR, Mode8023AD, ModeTLB:
		if b.XmitHashPolicy == nil {
			return nil, fmt.Errorf("%s: xmit_hash_policy unknown", b.Name)
		}
		pol, err := ParsePolicy(*b.XmitHashPolicy)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name, err)
		}
		p.Policy = pol
	case ModeRoundRobin, ModeActiveBackup, ModeBroadcast, ModeALB:
	default:
		return nil, fmt.Errorf("%s: unknown bonding mode %q", b.Name, p.Mode)
	}
	return p, nil
}

// Reasons a Predictor gives for outcomes other than Hashed.
const (
	reasonRR        = "balance-rr sends packet after packet on the next slave (round robin)"
	reasonALB       = "balance-alb balances by load (and rewrites ARP replies for receive)"
	reasonTLBLoad   = "balance-tlb with tlb_dynamic_lb=1 picks the least loaded slave"
	reasonTLBND     = "balance-tlb: IPv6 neighbour solicitations and advertisements go out the active slave on recent kernels and are hashed on older ones"
	reasonBroadcast = "broadcast mode sends every packet on every slave"
	reasonAB        = "active-backup sends everything on the active slave"
	reasonTLBOther  = "balance-tlb balances only unicast IPv4 and IPv6; this goes out the active slave"
	reasonNoActive  = "no active slave"
	reasonNoUsable  = "no slave can transmit: the kernel drops the packet"
)

// errNoMode is returned by Predict on a zero Predictor.
var errNoMode = errors.New("predictor without a bonding mode")

// Predict says where f leaves. The error is for flows Hash rejects
// (addresses missing, policy absent from the kernel); what the kernel
// decides unseen is an Unpredictable choice, not an error.
func (p *Predictor) Predict(f *Flow) (Choice, error) {
	c := Choice{Index: -1, Count: len(p.Usable)}
	switch p.Mode {
	case ModeRoundRobin:
		return p.unpredictable(c, reasonRR), nil
	case ModeALB:
		return p.unpredictable(c, reasonALB), nil
	case ModeBroadcast:
		c.Outcome, c.Reason = EverySlave, reasonBroadcast
		return c, nil
	case ModeActiveBackup:
		return p.active(c, reasonAB), nil
	case ModeTLB:
		if p.TLBDynamicLB {
			return p.unpredictable(c, reasonTLBLoad), nil
		}
		// bond_xmit_tlb_slave_get: unicast IPv4 and IPv6 only, and not
		// neighbour discovery.
		if f.DstMAC[0]&1 != 0 {
			return p.active(c, reasonTLBOther), nil
		}
		switch f.etherType() {
		case EtherTypeIPv4:
		case EtherTypeIPv6:
			if f.Proto == ProtoICMPv6 && !f.Fragment && (f.ICMPType == 135 || f.ICMPType == 136) {
				return p.unpredictable(c, reasonTLBND), nil
			}
		default:
			return p.active(c, reasonTLBOther), nil
		}
		if len(p.Usable) == 0 {
			return p.active(c, reasonTLBOther), nil
		}
	case ModeXOR, Mode8023AD:
	default:
		return c, errNoMode
	}
	h, err := Hash(p.Policy, f, p.Kernel)
	if err != nil {
		// Hash returns its *UnpredictableError values unwrapped; a type
		// assertion keeps this path free of allocations (errors.As is not).
		if u, ok := err.(*UnpredictableError); ok {
			return p.unpredictable(c, u.Reason), nil
		}
		return c, err
	}
	c.Hash = h
	if len(p.Usable) == 0 {
		c.Outcome, c.Reason = Dropped, reasonNoUsable
		return c, nil
	}
	c.Outcome, c.Index = Hashed, Pick(h, len(p.Usable))
	c.Slave = p.Usable[c.Index]
	return c, nil
}

func (p *Predictor) unpredictable(c Choice, reason string) Choice {
	c.Outcome, c.Reason = Unpredictable, reason
	return c
}

func (p *Predictor) active(c Choice, reason string) Choice {
	if p.ActiveSlave == "" {
		c.Outcome, c.Reason = Dropped, reasonNoActive
		return c
	}
	c.Outcome, c.Slave, c.Reason = Active, p.ActiveSlave, reason
	return c
}
