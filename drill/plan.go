package drill

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// Settings are the bond options that decide what a failover costs, as the
// kernel reports them (netlink); -1 when unknown.
type Settings struct {
	MIIMonMs, UpDelayMs, DownDelayMs int
	// NumPeerNotif is num_grat_arp (and num_unsol_na: one value).
	NumPeerNotif    int
	PeerNotifMs     int
	ResendIGMP      int
	ARPIntervalMs   int
	Primary         string
	PrimaryReselect string
}

// Plan is what a drill will do, decided before anything changes.
type Plan struct {
	Bond, Mode string
	Slave      string
	How        How
	// ActiveBefore is the bond's active slave before the drill ("" in
	// modes without one); NewActive the slave --how active moves it to.
	ActiveBefore, NewActive string
	// Survivors are the other slaves that can carry traffic meanwhile.
	Survivors []string
	Hold      time.Duration
	Settings  Settings
	// bond is the bond as read when planning.
	bond *bonding.Bond
}

// MakePlan decides the drill on bond b. traffic is each slave's bytes
// (tx+rx) over a short look, to pick the busiest slave when neither
// --slave nor an active slave names one. It refuses (ErrRefused) what
// would take the whole bond down unless force.
func MakePlan(b *bonding.Bond, s Settings, o Options, traffic map[string]uint64) (*Plan, error) {
	p := &Plan{Bond: b.Name, Mode: deref(b.Mode), How: o.How, Hold: o.Hold, Settings: s, ActiveBefore: deref(b.ActiveSlave)}
	if len(b.Slaves) == 0 {
		return nil, fmt.Errorf("%s has no slaves: %w", b.Name, ErrRefused)
	}
	names := make([]string, len(b.Slaves))
	for i := range b.Slaves {
		names[i] = b.Slaves[i].Name
	}
	switch {
	case o.Slave != "":
		if b.Slave(o.Slave) == nil {
			return nil, fmt.Errorf("%s is not a slave of %s (slaves: %s)", o.Slave, b.Name, strings.Join(names, ", "))
		}
		p.Slave = o.Slave
	case p.ActiveSlaveMode() && p.ActiveBefore != "":
		p.Slave = p.ActiveBefore
	default:
		p.Slave = busiest(names, traffic)
	}
	if !linkUp(b.Slave(p.Slave)) {
		return nil, fmt.Errorf("%s is already down (mii %s, %s): there is no failover to measure: %w", p.Slave,
			deref(b.Slave(p.Slave).MIIStatus), deref(b.Slave(p.Slave).OperState), ErrRefused)
	}
	for i := range b.Slaves {
		if sl := &b.Slaves[i]; sl.Name != p.Slave && linkUp(sl) {
			p.Survivors = append(p.Survivors, sl.Name)
		}
	}
	if o.How == Active {
		if !p.ActiveSlaveMode() {
			return nil, fmt.Errorf("--how active moves active_slave, which mode %s does not have (active-backup, balance-tlb and balance-alb do): use --how down: %w", p.Mode, ErrRefused)
		}
		if p.Slave != p.ActiveBefore {
			return nil, fmt.Errorf("--how active takes the active slave away, and %s is not it (%s is): %w", p.Slave, orNone(p.ActiveBefore), ErrRefused)
		}
		if len(p.Survivors) == 0 {
			return nil, fmt.Errorf("no other slave of %s has link up to become active: %w", b.Name, ErrRefused)
		}
		p.NewActive = p.Survivors[0]
		return p, nil
	}
	if len(p.Survivors) == 0 && !o.Force {
		return nil, fmt.Errorf("%s is the last usable slave of %s (the others: %s): taking it down takes the whole bond down; --force does it anyway: %w",
			p.Slave, b.Name, downOnes(b, p.Slave), ErrRefused)
	}
	return p, nil
}

// ActiveSlaveMode reports whether the bond's mode has one active slave.
func (p *Plan) ActiveSlaveMode() bool {
	switch p.Mode {
	case bonding.ModeActiveBackup, bonding.ModeTLB, bonding.ModeALB:
		return true
	}
	return false
}

// Steps are the plan in words, for --plan and the confirmation.
func (p *Plan) Steps() []string {
	var out []string
	switch p.How {
	case Active:
		out = append(out, fmt.Sprintf("move %s's active_slave from %s to %s (no link goes down)", p.Bond, p.Slave, p.NewActive))
		out = append(out, fmt.Sprintf("after %v, move it back to %s", p.Hold, p.Slave))
	default:
		out = append(out, fmt.Sprintf("set %s administratively down (as a pulled cable); %s carry the traffic", p.Slave, orNone(strings.Join(p.Survivors, ", "))))
		if len(p.Survivors) == 0 {
			out = append(out, fmt.Sprintf("WARNING: %s has no other usable slave: the bond goes down", p.Bond))
		}
		out = append(out, fmt.Sprintf("after %v, set %s up again and watch the failback", p.Hold, p.Slave))
		if p.ActiveBefore != "" {
			out = append(out, fmt.Sprintf("finally make sure %s is the active slave again, as before", p.ActiveBefore))
		}
	}
	return out
}

func busiest(names []string, traffic map[string]uint64) string {
	best := names[0]
	for _, n := range names {
		if traffic[n] > traffic[best] {
			best = n
		}
	}
	return best
}

// linkUp is a slave the bond could send on: MII up and the interface not
// down (unknown counts as up).
func linkUp(s *bonding.Slave) bool {
	if s == nil {
		return false
	}
	if s.MIIStatus != nil && *s.MIIStatus != "up" {
		return false
	}
	if s.OperState != nil && slices.Contains([]string{"down", "lowerlayerdown", "notpresent", "dormant"}, *s.OperState) {
		return false
	}
	return true
}

func downOnes(b *bonding.Bond, except string) string {
	var out []string
	for i := range b.Slaves {
		if s := &b.Slaves[i]; s.Name != except {
			out = append(out, fmt.Sprintf("%s mii %s", s.Name, orNone(deref(s.MIIStatus))))
		}
	}
	return orNone(strings.Join(out, ", "))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
